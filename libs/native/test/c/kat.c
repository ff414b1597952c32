/*
 * KAT driver: runs every known-answer file of test/vectors (decompressed
 * by `make vectors` into test/c/out/vectors) against the C core, without
 * Node, on every implementation path (dispatched and portable). Each vector is also hashed in two pieces with a serialize →
 * deserialize round trip in between, so the state format is exercised on
 * every vector. Built plain, with sanitizers (make asan) or for riscv64.
 *
 *   kat <kat-dir>         exit status 0 when every vector passed
 *   HASHQ_REQUIRE_ALL=1   an algorithm that is not linked is a failure
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/hashq_testing.h"
#include "vectors.h"

enum fmt { LWC, LWC_CXOF, CAVP, CAVP_VAROUT, MONTE_SHA2, MONTE_SHA3, MONTE_SHAKE };

struct katfile {
  const char *path;
  const char *algo;
  enum fmt fmt;
};

static const struct katfile files[] = {
    {"sha1/SHA1ShortMsg.rsp", "sha1", CAVP},
    {"sha1/SHA1LongMsg.rsp", "sha1", CAVP},
    {"sha1/SHA1Monte.rsp", "sha1", MONTE_SHA2},
    {"sha2/SHA256ShortMsg.rsp", "sha256", CAVP},
    {"sha2/SHA256LongMsg.rsp", "sha256", CAVP},
    {"sha2/SHA256Monte.rsp", "sha256", MONTE_SHA2},
    {"sha2/SHA512ShortMsg.rsp", "sha512", CAVP},
    {"sha2/SHA512LongMsg.rsp", "sha512", CAVP},
    {"sha2/SHA512Monte.rsp", "sha512", MONTE_SHA2},
    {"sha2/lwc-format-sha256/LWC_HASH_KAT_256.txt", "sha256", LWC},
    {"sha3/SHA3_256ShortMsg.rsp", "sha3-256", CAVP},
    {"sha3/SHA3_256LongMsg.rsp", "sha3-256", CAVP},
    {"sha3/SHA3_256Monte.rsp", "sha3-256", MONTE_SHA3},
    {"sha3/SHAKE128ShortMsg.rsp", "shake128", CAVP},
    {"sha3/SHAKE128LongMsg.rsp", "shake128", CAVP},
    {"sha3/SHAKE128VariableOut.rsp", "shake128", CAVP_VAROUT},
    {"sha3/SHAKE128Monte.rsp", "shake128", MONTE_SHAKE},
    {"sha3/SHAKE256ShortMsg.rsp", "shake256", CAVP},
    {"sha3/SHAKE256LongMsg.rsp", "shake256", CAVP},
    {"sha3/SHAKE256VariableOut.rsp", "shake256", CAVP_VAROUT},
    {"sha3/SHAKE256Monte.rsp", "shake256", MONTE_SHAKE},
    {"ascon/sp800-232/asconhash256/LWC_HASH_KAT_128_256.txt", "ascon-hash256", LWC},
    {"ascon/sp800-232/asconxof128/LWC_XOF_KAT_128_512.txt", "ascon-xof128", LWC},
    {"ascon/sp800-232/asconcxof128/LWC_CXOF_KAT_128_512.txt", "ascon-cxof128", LWC_CXOF},
    {"ascon/v1.2/asconhashv12/LWC_HASH_KAT_256.txt", "asconhashv12", LWC},
    {"ascon/v1.2/asconhashav12/LWC_HASH_KAT_256.txt", "asconhashav12", LWC},
    {"ascon/v1.2/asconxofv12/LWC_HASH_KAT_256.txt", "asconxofv12", LWC},
    {"ascon/v1.2/asconxofav12/LWC_HASH_KAT_256.txt", "asconxofav12", LWC},
    {"xoodyak/xoodyakround3/LWC_HASH_KAT_256.txt", "xoodyak", LWC},
    {"esch/esch256v2/LWC_HASH_KAT_256.txt", "esch256", LWC},
    {"esch/esch384v2/LWC_HASH_KAT_384.txt", "esch384", LWC},
    {"romulus-h/romulush/LWC_HASH_KAT_256.txt", "romulush", LWC},
    {"photon-beetle-hash/photonbeetlehash256rate32v1/LWC_HASH_KAT_256.txt",
     "photonbeetlehash256", LWC},
};

/* Every algorithm the library must have (HASHQ_REQUIRE_ALL). */
static const char *required[] = {
    "sha1", "sha224", "sha256", "sha384", "sha512", "sha3-256", "sha3-512",
    "shake128", "shake256", "ascon-hash256", "ascon-xof128", "ascon-cxof128",
    "asconhashv12", "asconhashav12", "asconxofv12", "asconxofav12", "md5",
    "crc32", "crc32c", "crc64nvme", "xoodyak", "esch256", "esch384",
    "romulush", "photonbeetlehash256"};


static unsigned long failures, passed;
static unsigned long paired; /* vectors also run as one of two interleaved messages */
static unsigned long long rng = 0x9E3779B97F4A7C15ull;

static unsigned long long next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (fread(buf, 1, (size_t)n, f) != (size_t)n) n = 0;
  buf[n] = 0;
  fclose(f);
  *len = (size_t)n;
  return buf;
}

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Decode hex into a malloc'd buffer; *n gets the byte count. */
static unsigned char *unhex(const char *s, size_t *n) {
  size_t len = strlen(s);
  unsigned char *out = malloc(len / 2 + 1);
  size_t k = 0;
  for (size_t i = 0; i + 1 < len + 1 && hexval(s[i]) >= 0 && hexval(s[i + 1]) >= 0; i += 2)
    out[k++] = (unsigned char)(hexval(s[i]) << 4 | hexval(s[i + 1]));
  *n = k;
  return out;
}

/* Hash msg, once in one go and once split at a random point with a state
 * round trip between the halves; both must equal `want`. */
static void check_vector(int id, const char *file, long count,
                         const unsigned char *custom, size_t clen,
                         const unsigned char *msg, size_t mlen,
                         const unsigned char *want, size_t wlen) {
  unsigned char out[512], out2[512], state[HQ_STATE_MAX];
  _Alignas(8) unsigned char c1[HQ_CTX_SIZE], c2[HQ_CTX_SIZE];
  hq_ctx *a = (hq_ctx *)c1, *b = (hq_ctx *)c2;
  if (wlen > sizeof out) wlen = sizeof out;
  long r = hq_hash(id, msg, mlen, custom, clen, out, wlen);
  size_t split = mlen ? (size_t)(next_rand() % (mlen + 1)) : 0;
  int ok = r == (long)wlen && memcmp(out, want, wlen) == 0;
  if (hq_init(a, id, custom, clen, 0) == 0) {
    hq_update(a, msg, split);
    size_t slen = hq_serialize(a, state);
    if (hq_deserialize(b, state, slen, id) != 0) ok = 0;
    hq_update(b, msg + split, mlen - split);
    if (hq_final(b, out2, wlen) != (long)wlen || memcmp(out2, want, wlen)) ok = 0;
  } else {
    ok = 0;
  }
  /* The message again beside a second one (its tail from a random offset),
   * each started with a random first part, then both through hq_update2:
   * where the path pairs them, their common whole blocks run interleaved.
   * The first must give `want`, the second what hq_hash gives for it. */
  {
    _Alignas(8) unsigned char c3[HQ_CTX_SIZE], c4[HQ_CTX_SIZE];
    unsigned char ref[512];
    hq_ctx *x = (hq_ctx *)c3, *y = (hq_ctx *)c4;
    size_t off = mlen ? (size_t)(next_rand() % (mlen + 1)) : 0;
    size_t px = split;
    size_t py = (size_t)(next_rand() % (mlen - off + 1));
    if (hq_init(x, id, custom, clen, 0) == 0 && hq_init(y, id, custom, clen, 0) == 0 &&
        hq_hash(id, msg + off, mlen - off, custom, clen, ref, wlen) == (long)wlen) {
      if (hq_pairable(x, y)) paired++;
      hq_update(x, msg, px);
      hq_update(y, msg + off, py);
      hq_update2(x, msg + px, mlen - px, y, msg + off + py, mlen - off - py);
      if (hq_final(x, out2, wlen) != (long)wlen || memcmp(out2, want, wlen)) ok = 0;
      if (hq_final(y, out2, wlen) != (long)wlen || memcmp(out2, ref, wlen)) ok = 0;
    } else {
      ok = 0;
    }
  }
  if (ok) {
    passed++;
  } else if (failures++ < 20) {
    fprintf(stderr, "FAIL %s count %ld (len %zu, split %zu)\n", file, count, mlen, split);
  }
}

struct rec { /* the fields of one record, pointers into the file text */
  const char *f[8];
  const char *v[8];
  int n;
};

static const char *get(const struct rec *r, const char *key) {
  for (int i = 0; i < r->n; i++)
    if (strcmp(r->f[i], key) == 0) return r->v[i];
  return NULL;
}

/* Split text into records of "Key = Value" lines separated by blank lines;
 * header lines ('#', '[') set *section. Calls fn for each record. */
static void each_record(char *text, void (*fn)(const struct rec *, const char *section, void *),
                        void *arg) {
  struct rec r = {.n = 0};
  char section[64] = "";
  char *line = text;
  while (line) {
    char *nl = strchr(line, '\n');
    if (nl) *nl = 0;
    size_t len = strlen(line);
    while (len && (line[len - 1] == '\r' || line[len - 1] == ' ')) line[--len] = 0;
    if (line[0] == '[') {
      snprintf(section, sizeof section, "%s", line);
    } else if (len == 0 || line[0] == '#') {
      if (r.n) fn(&r, section, arg);
      r.n = 0;
    } else {
      char *eq = strstr(line, " =");
      if (eq && r.n < 8) {
        *eq = 0;
        char *val = eq + 2;
        while (*val == ' ') val++;
        r.f[r.n] = line;
        r.v[r.n] = val;
        r.n++;
      }
    }
    line = nl ? nl + 1 : NULL;
  }
  if (r.n) fn(&r, section, arg);
}

struct run {
  int id;
  const struct katfile *kf;
  unsigned char seed[512];
  size_t seedlen;
  size_t shake_min, shake_max, shake_outlen;
};

static void on_lwc(const struct rec *r, const char *section, void *arg) {
  struct run *run = arg;
  (void)section;
  const char *count = get(r, "Count"), *msg = get(r, "Msg"), *md = get(r, "MD");
  if (!count || !msg || !md) return;
  const char *z = get(r, "Z");
  size_t mlen, wlen, zlen = 0;
  unsigned char *m = unhex(msg, &mlen), *w = unhex(md, &wlen);
  unsigned char *zz = z ? unhex(z, &zlen) : NULL;
  check_vector(run->id, run->kf->path, atol(count), zz, zlen, m, mlen, w, wlen);
  free(m);
  free(w);
  free(zz);
}

static void on_cavp(const struct rec *r, const char *section, void *arg) {
  struct run *run = arg;
  (void)section;
  const char *len = get(r, "Len"), *msg = get(r, "Msg");
  const char *md = get(r, "MD") ? get(r, "MD") : get(r, "Output");
  if (run->kf->fmt == CAVP_VAROUT) len = "var";
  if (!len || !msg || !md) return;
  size_t mlen, wlen;
  unsigned char *m = unhex(msg, &mlen), *w = unhex(md, &wlen);
  if (run->kf->fmt == CAVP && atol(len) == 0) mlen = 0; /* "Msg = 00" */
  long count = get(r, "COUNT") ? atol(get(r, "COUNT")) : atol(len);
  check_vector(run->id, run->kf->path, count, NULL, 0, m, mlen, w, wlen);
  free(m);
  free(w);
}

/* The Monte Carlo seed (or SHAKE's first message) of a record. */
static void take_seed(struct run *run, const char *hex) {
  size_t n;
  unsigned char *s = unhex(hex, &n);
  if (n > sizeof run->seed) n = sizeof run->seed;
  memcpy(run->seed, s, n);
  run->seedlen = n;
  free(s);
}

/* Compare a Monte Carlo checkpoint with the record's expected hex value. */
static void monte_check(const struct run *run, const char *count,
                        const unsigned char *got, size_t len, const char *want_hex) {
  size_t wlen;
  unsigned char *w = unhex(want_hex, &wlen);
  if (wlen == len && memcmp(got, w, len) == 0) passed++;
  else if (failures++ < 20) fprintf(stderr, "FAIL %s COUNT %s\n", run->kf->path, count);
  free(w);
}

/* SHAVS Monte Carlo for SHA-1/SHA-2 (kat/README.md §1b). */
static void on_monte_sha2(const struct rec *r, const char *section, void *arg) {
  struct run *run = arg;
  (void)section;
  if (get(r, "Seed")) {
    take_seed(run, get(r, "Seed"));
    return;
  }
  const char *count = get(r, "COUNT"), *md = get(r, "MD");
  if (!count || !md) return;
  size_t d = run->seedlen;
  unsigned char m[3 * 64], cur[64];
  memcpy(m, run->seed, d);
  memcpy(m + d, run->seed, d);
  memcpy(m + 2 * d, run->seed, d);
  for (int i = 3; i < 1003; i++) {
    hq_hash(run->id, m, 3 * d, NULL, 0, cur, d);
    memmove(m, m + d, 2 * d);
    memcpy(m + 2 * d, cur, d);
  }
  monte_check(run, count, cur, d, md);
  memcpy(run->seed, cur, d);
}

/* SHA3VS Monte Carlo for SHA3-256. */
static void on_monte_sha3(const struct rec *r, const char *section, void *arg) {
  struct run *run = arg;
  (void)section;
  if (get(r, "Seed")) {
    take_seed(run, get(r, "Seed"));
    return;
  }
  const char *count = get(r, "COUNT"), *md = get(r, "MD");
  if (!count || !md) return;
  for (int i = 0; i < 1000; i++)
    hq_hash(run->id, run->seed, run->seedlen, NULL, 0, run->seed, run->seedlen);
  monte_check(run, count, run->seed, run->seedlen, md);
}

/* SHA3VS Monte Carlo for SHAKE: variable output lengths. */
static void on_monte_shake(const struct rec *r, const char *section, void *arg) {
  struct run *run = arg;
  (void)section;
  if (get(r, "Msg") && !get(r, "COUNT")) {
    take_seed(run, get(r, "Msg"));
    run->shake_outlen = run->shake_max;
    return;
  }
  const char *count = get(r, "COUNT"), *out = get(r, "Output");
  if (!count || !out) return;
  unsigned char prev[512], m[16];
  size_t plen = run->seedlen, range = run->shake_max - run->shake_min + 1;
  memcpy(prev, run->seed, plen);
  for (int i = 0; i < 1000; i++) {
    memset(m, 0, 16);
    memcpy(m, prev, plen < 16 ? plen : 16);
    hq_hash(run->id, m, 16, NULL, 0, prev, run->shake_outlen);
    plen = run->shake_outlen;
    unsigned v = (unsigned)prev[plen - 2] << 8 | prev[plen - 1];
    run->shake_outlen = run->shake_min + v % range;
  }
  monte_check(run, count, prev, plen, out);
  memcpy(run->seed, prev, plen);
  run->seedlen = plen;
}

/* The SHAKE Monte files give the output range in their header. */
static void shake_range(const char *text, struct run *run) {
  const char *p = strstr(text, "Minimum Output Length (bits) = ");
  const char *q = strstr(text, "Maximum Output Length (bits) = ");
  run->shake_min = p ? (size_t)atol(p + 31) / 8 : 16;
  run->shake_max = q ? (size_t)atol(q + 31) / 8 : 16;
}

static int run_file(const char *dir, const struct katfile *kf) {
  char path[1024];
  size_t len;
  snprintf(path, sizeof path, "%s/%s", dir, kf->path);
  struct run run = {.kf = kf};
  run.id = hq_find(kf->algo);
  if (run.id < 0) {
    printf("  skip %-26s %s (not linked)\n", kf->algo, kf->path);
    return 0;
  }
  char *text = slurp(path, &len);
  if (!text) {
    fprintf(stderr, "FAIL cannot read %s\n", path);
    failures++;
    return 1;
  }
  unsigned long before = passed, fb = failures;
  switch (kf->fmt) {
  case LWC: case LWC_CXOF: each_record(text, on_lwc, &run); break;
  case CAVP: case CAVP_VAROUT: each_record(text, on_cavp, &run); break;
  case MONTE_SHA2: each_record(text, on_monte_sha2, &run); break;
  case MONTE_SHA3: each_record(text, on_monte_sha3, &run); break;
  case MONTE_SHAKE:
    shake_range(text, &run);
    /* the header line "[Minimum ...]" etc. are sections; records follow */
    each_record(text, on_monte_shake, &run);
    break;
  }
  printf("  %-20s %6lu passed %4lu failed  %s\n", kf->algo, passed - before,
         failures - fb, kf->path);
  if (passed == before && failures == fb) { /* a file that tests nothing */
    fprintf(stderr, "FAIL %s: no vectors parsed\n", kf->path);
    failures++;
  }
  free(text);
  return 0;
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "out/vectors";
  int require_all = getenv("HASHQ_REQUIRE_ALL") && strcmp(getenv("HASHQ_REQUIRE_ALL"), "1") == 0;
  /* Level 0: the dispatched paths. Then hide the CPU's features one at a
   * time, most advanced first, and run the vectors again whenever that
   * brings some algorithm to a path not run yet; the last level is the
   * portable one. So every path this machine has is checked. */
  static const char *const peel[] = {
      "avx512vl", "vpclmul", "avx2", "sha", "sse4.2", "pclmul", "bmi2", "bmi1", "sse4.1", "ssse3",
      "sha512", "sha2", "sha1", "pmull", "crc32", "zknh", "zbc", "zbb"};
  enum { MAX_SEEN = 256 };
  static const char *seen_impl[MAX_SEEN];
  static int seen_algo[MAX_SEEN];
  int nseen = 0;
  uint32_t hidden = 0;
  size_t step = 0;
  for (int level = 0;; level++) {
    int portable = 0;
    if (level == 0) {
      hq_dispatch_init_hiding(0);
    } else {
      /* the next feature this CPU has, or the portable level */
      uint32_t bit = 0;
      while (step < sizeof peel / sizeof peel[0] && !bit) {
        uint32_t b = 0;
        if (hq_cpu_feature_bits(peel[step++], &b) == 0 && (hq_cpu_detected() & b)) bit = b;
      }
      if (bit) {
        hidden |= bit;
        hq_dispatch_init_hiding(hidden);
      } else {
        portable = 1;
        hq_dispatch_init(1);
      }
    }
    int fresh = 0;
    for (int i = 0; i < hq_algorithm_count(); i++) {
      const hq_info *in = hq_algorithm_at(i);
      const char *impl = hq_implementation(in->id);
      int known = 0;
      for (int k = 0; k < nseen && !known; k++)
        known = seen_algo[k] == in->id && strcmp(seen_impl[k], impl) == 0;
      if (!known && nseen < MAX_SEEN) {
        seen_algo[nseen] = in->id;
        seen_impl[nseen++] = impl;
        fresh = 1;
      }
    }
    if (fresh || portable) {
      printf("== %s paths\n", portable ? "portable" : level == 0 ? "dispatched" : "dispatched, hiding");
      if (hidden && !portable) {
        printf("  hidden:");
        for (uint32_t b = 1; b; b <<= 1)
          if ((hidden & b) && hq_cpu_feature_name(b)) printf(" %s", hq_cpu_feature_name(b));
        printf("\n");
      }
      for (int i = 0; i < hq_algorithm_count(); i++) {
        const hq_info *in = hq_algorithm_at(i);
        printf("  %-20s %s\n", in->name, hq_implementation(in->id));
      }
      for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) run_file(dir, &files[i]);
      if (hq_test_checksums) {
        unsigned long f = (unsigned long)hq_test_checksums();
        printf("  checksum vectors: %lu failed\n", f);
        failures += f;
      }
    }
    if (portable) break;
  }
  if (hq_test_file_map) {
    hq_dispatch_init(0);
    failures += (unsigned long)hq_test_file_map();
  }
  for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
    if (hq_find(required[i]) < 0) {
      printf("missing algorithm: %s\n", required[i]);
      if (require_all) failures++;
    }
  }
  printf("%lu passed, %lu failed (%lu of them also hashed interleaved with a second message)\n",
         passed, failures, paired);
  return failures ? 1 : 0;
}
