/*
 * Known answers and cross-checks for the object-storage checksums: md5,
 * crc32, crc32c, crc64nvme. hq_test_checksums() returns the number of
 * failures and prints each one; the KAT driver calls it.
 *
 * Oracles: published vectors (sources named beside each), a bit-at-a-time
 * CRC and a loop-form MD5 written here (sharing no code or tables with the
 * library: MD5's constants are derived from the sine, as RFC 1321 defines
 * them), and
 * the other implementation paths of the same algorithm. Every path the CPU
 * supports is run, whatever hq_dispatch_init chose; the dispatch is
 * restored at the end.
 */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "hashq_testing.h"
#include "vectors.h"

static int failures;
static long checks;

static void check(int ok, const char *what, const char *algo,
                  const char *impl, size_t len, size_t detail) {
  checks++;
  if (ok) return;
  printf("FAIL checksums: %s %s [%s] len=%zu at=%zu\n", what, algo, impl, len,
         detail);
  failures++;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_random(void) { /* xorshift64 */
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static void fill_random(uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++) p[i] = (uint8_t)next_random();
}

static void unhex(const char *h, uint8_t *out) {
  for (size_t i = 0; h[2 * i]; i++) {
    unsigned v;
    sscanf(h + 2 * i, "%2x", &v);
    out[i] = (uint8_t)v;
  }
}

/* ---- published vectors ------------------------------------------------ */

struct text_vector {
  const char *msg, *md5, *crc32;
};

/* md5: RFC 1321 appendix A.5. crc32 of the same strings: the values zlib's
 * crc32 returns (checked with Node's zlib.crc32), last one the CRC
 * catalogue's check value. */
static const struct text_vector text_vectors[] = {
    {"", "d41d8cd98f00b204e9800998ecf8427e", "00000000"},
    {"a", "0cc175b9c0f1b6a831c399e269772661", "e8b7be43"},
    {"abc", "900150983cd24fb0d6963f7d28e17f72", "352441c2"},
    {"message digest", "f96b697d7cb7938d525a2f31aaf161d0", "20159d7f"},
    {"abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b",
     "4c2750bd"},
    {"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
     "d174ab98d277d9f5a5611c2c9f419d9f", "1fc2e6d2"},
    {"1234567890123456789012345678901234567890123456789012345678901234567890"
     "1234567890",
     "57edf4a22be3c955ac49da2e2107b67a", "7ca94a72"},
    {"123456789", NULL, "cbf43926"},
};

enum pattern { ZEROES, ONES, INCREASING, DECREASING };

struct pattern_vector {
  const char *algo;
  enum pattern pattern;
  size_t len;
  const char *digest;
};

static const struct pattern_vector pattern_vectors[] = {
    /* RFC 3720 appendix B.4 (iSCSI CRC examples). */
    {"crc32c", ZEROES, 32, "8a9136aa"},
    {"crc32c", ONES, 32, "62a8ab43"},
    {"crc32c", INCREASING, 32, "46dd794e"},
    {"crc32c", DECREASING, 32, "113fdb5c"},
    /* NVM Express NVM Command Set Specification 1.0, "64b CRC Test Cases"
     * (4 KiB buffers). */
    {"crc64nvme", ZEROES, 4096, "6482d367eb22b64e"},
    {"crc64nvme", ONES, 4096, "c0ddba7302eca3ac"},
    {"crc64nvme", INCREASING, 4096, "3e729f5f6750449c"},
    {"crc64nvme", DECREASING, 4096, "9a2df64b8e9e517e"},
};

/* The CRC catalogue's check values, CRC of "123456789". */
static const struct {
  const char *algo, *digest;
} check_values[] = {
    {"crc32", "cbf43926"},
    {"crc32c", "e3069283"},
    {"crc64nvme", "ae8b14860a799888"},
};

static void fill_pattern(uint8_t *p, size_t n, enum pattern pat) {
  for (size_t i = 0; i < n; i++) {
    uint8_t inc = (uint8_t)i;
    p[i] = pat == ZEROES ? 0 : pat == ONES ? 0xff
         : pat == INCREASING ? inc : (uint8_t)(n - 1 - i);
  }
}

static void expect(const char *algo, const char *impl, const uint8_t *msg,
                   size_t len, const char *hex) {
  uint8_t want[64], got[64];
  size_t dlen = strlen(hex) / 2;
  unhex(hex, want);
  long r = hq_hash(hq_find(algo), msg, len, NULL, 0, got, 0);
  check(r == (long)dlen && memcmp(got, want, dlen) == 0, "known answer", algo,
        impl, len, 0);
}

/* ---- bit-at-a-time reference CRC -------------------------------------- */

struct crc_def {
  const char *name;
  unsigned width;
  uint64_t poly; /* reflected, without the x^width term */
};

static const struct crc_def crcs[] = {
    {"crc32", 32, 0xEDB88320u},
    {"crc32c", 32, 0x82F63B78u},
    {"crc64nvme", 64, 0x9A6C9329AC4BC9B5ull},
};

/* Digest bytes (the CRC value big-endian) by the textbook definition:
 * init all ones, one bit at a time, xorout all ones. */
static void reference_crc(const struct crc_def *d, const uint8_t *p, size_t n,
                          uint8_t *out) {
  uint64_t mask = d->width == 64 ? ~0ull : (1ull << d->width) - 1;
  uint64_t reg = mask;
  for (size_t i = 0; i < n; i++) {
    reg ^= p[i];
    for (int b = 0; b < 8; b++) reg = (reg >> 1) ^ (d->poly & (0ull - (reg & 1)));
  }
  reg = ~reg & mask;
  for (unsigned i = 0; i < d->width / 8; i++)
    out[i] = (uint8_t)(reg >> (d->width - 8 - 8 * i));
}

/* ---- loop-form MD5 (RFC 1321 section 3.4) ----------------------------- */

/* |sin(x)| for 0 < x < 65 by its Taylor series after reducing x to
 * [-pi, pi], in long double: far more precise than the 32 bits needed.
 * (No libm, so the driver links without -lm.) */
static long double abs_sin(long double x) {
  const long double two_pi = 6.283185307179586476925286766559L;
  while (x > two_pi / 2) x -= two_pi;
  long double term = x, sum = x;
  for (int k = 1; k < 40; k++) {
    term *= -x * x / ((2 * k) * (2 * k + 1));
    sum += term;
  }
  return sum < 0 ? -sum : sum;
}

static void reference_md5(const uint8_t *msg, size_t n, uint8_t out[16]) {
  static const unsigned shift[4][4] = {
      {7, 12, 17, 22}, {5, 9, 14, 20}, {4, 11, 16, 23}, {6, 10, 15, 21}};
  uint32_t t[64], h[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
  for (int i = 0; i < 64; i++) /* T[i] = floor(2^32 · |sin(i + 1)|) */
    t[i] = (uint32_t)(4294967296.0L * abs_sin((long double)(i + 1)));
  size_t padded = (n + 8) / 64 * 64 + 64;
  uint8_t *m = calloc(padded, 1);
  if (!m) return;
  memcpy(m, msg, n);
  m[n] = 0x80;
  for (int i = 0; i < 8; i++) m[padded - 8 + i] = (uint8_t)((uint64_t)n * 8 >> (8 * i));
  for (size_t off = 0; off < padded; off += 64) {
    uint32_t x[16], v[4] = {h[0], h[1], h[2], h[3]};
    for (int i = 0; i < 16; i++)
      x[i] = (uint32_t)m[off + 4 * i] | (uint32_t)m[off + 4 * i + 1] << 8 |
             (uint32_t)m[off + 4 * i + 2] << 16 | (uint32_t)m[off + 4 * i + 3] << 24;
    for (int i = 0; i < 64; i++) {
      int r = i / 16;
      uint32_t b = v[1], c = v[2], d = v[3], f;
      int k;
      if (r == 0) { f = (b & c) | (~b & d); k = i; }
      else if (r == 1) { f = (b & d) | (c & ~d); k = (5 * i + 1) % 16; }
      else if (r == 2) { f = b ^ c ^ d; k = (3 * i + 5) % 16; }
      else { f = c ^ (b | ~d); k = (7 * i) % 16; }
      uint32_t sum = v[0] + f + x[k] + t[i];
      unsigned s = shift[r][i % 4];
      v[0] = d;
      v[3] = c;
      v[2] = b;
      v[1] = b + (sum << s | sum >> (32 - s));
    }
    for (int i = 0; i < 4; i++) h[i] += v[i];
  }
  free(m);
  for (int i = 0; i < 16; i++) out[i] = (uint8_t)(h[i / 4] >> (8 * (i % 4)));
}

/* ---- implementation paths --------------------------------------------- */

/* Feature sets that select different paths; those the CPU lacks are
 * skipped. */
static const uint32_t path_masks[] = {
    0,
    HQ_CPU_X86_SSE42,
    HQ_CPU_X86_PCLMUL | HQ_CPU_X86_SSE41,
    HQ_CPU_X86_PCLMUL | HQ_CPU_X86_SSE41 | HQ_CPU_X86_SSE42,
    HQ_CPU_X86_PCLMUL | HQ_CPU_X86_SSE41 | HQ_CPU_X86_AVX2, /* vpclmul */
    HQ_CPU_X86_PCLMUL | HQ_CPU_X86_SSE41 | HQ_CPU_X86_SSE42 | HQ_CPU_X86_AVX2,
    HQ_CPU_ARM_CRC32,
    HQ_CPU_ARM_PMULL,
    HQ_CPU_ARM_CRC32 | HQ_CPU_ARM_PMULL,
};
#define NPATHS (sizeof path_masks / sizeof path_masks[0])

static uint32_t cpu_real;

/* Selects path k of algo; 0 when the CPU lacks it. */
static int use_path(hq_algo *a, size_t k) {
  if ((path_masks[k] & cpu_real) != path_masks[k]) return 0;
  if (a->select) a->select(a, path_masks[k]); /* md5 has one path */
  return 1;
}

/* Absorbs msg[cut[i-1]..cut[i]) for i = 0..ncut (cut[ncut] is the whole
 * length), on path paths[i] when paths is given, with a serialize →
 * deserialize round trip into a fresh context after every piece. */
static int digest_in_pieces(hq_algo *a, const uint8_t *msg, const size_t *cut,
                            size_t ncut, const size_t *paths, uint8_t *out) {
  _Alignas(8) uint8_t ctxbuf[HQ_CTX_SIZE], fresh[HQ_CTX_SIZE];
  uint8_t state[HQ_STATE_MAX];
  hq_ctx *c = (hq_ctx *)(void *)ctxbuf;
  if (hq_init(c, a->info.id, NULL, 0, 0) != HQ_OK) return -1;
  size_t at = 0;
  for (size_t i = 0; i <= ncut; i++) {
    if (paths) use_path(a, paths[i]);
    hq_update(c, msg + at, cut[i] - at);
    at = cut[i];
    size_t slen = hq_serialize(c, state);
    memset(fresh, 0xA5, sizeof fresh);
    if (hq_deserialize((hq_ctx *)(void *)fresh, state, slen, a->info.id))
      return -1;
    memcpy(ctxbuf, fresh, sizeof ctxbuf);
  }
  return hq_final(c, out, 0) == (long)a->info.digest_len ? 0 : -1;
}

static void check_published(void) {
  static uint8_t buf[4096];
  for (size_t k = 0; k < NPATHS; k++) {
    if ((path_masks[k] & cpu_real) != path_masks[k]) continue;
    for (size_t i = 0; i < sizeof check_values / sizeof check_values[0]; i++) {
      hq_algo *a = hq_algo_by_id(hq_find(check_values[i].algo));
      use_path(a, k);
      expect(a->info.name, a->impl, (const uint8_t *)"123456789", 9,
             check_values[i].digest);
    }
    hq_algo *crc32 = hq_algo_by_id(HQ_CRC32), *md5 = hq_algo_by_id(HQ_MD5);
    use_path(crc32, k);
    for (size_t i = 0; i < sizeof text_vectors / sizeof text_vectors[0]; i++) {
      const struct text_vector *v = &text_vectors[i];
      const uint8_t *m = (const uint8_t *)v->msg;
      expect("crc32", crc32->impl, m, strlen(v->msg), v->crc32);
      if (v->md5) expect("md5", md5->impl, m, strlen(v->msg), v->md5);
    }
    for (size_t i = 0; i < sizeof pattern_vectors / sizeof pattern_vectors[0];
         i++) {
      const struct pattern_vector *v = &pattern_vectors[i];
      hq_algo *a = hq_algo_by_id(hq_find(v->algo));
      use_path(a, k);
      fill_pattern(buf, v->len, v->pattern);
      expect(v->algo, a->impl, buf, v->len, v->digest);
    }
  }
}

/* Every length 0..1000 and a few long ones, at a random alignment, on
 * every path, against the references above. */
static void check_against_reference(void) {
  enum { LONGEST = 70000 };
  uint8_t *buf = malloc(LONGEST + 64);
  uint8_t want[8], got[8];
  check(buf != NULL, "malloc", "", "", LONGEST, 0);
  if (!buf) return;
  fill_random(buf, LONGEST + 64);
  for (size_t i = 0; i < sizeof crcs / sizeof crcs[0]; i++) {
    hq_algo *a = hq_algo_by_id(hq_find(crcs[i].name));
    for (size_t len = 0; len <= 1000 + 12; len++) {
      size_t n = len <= 1000 ? len : 1001 + next_random() % (LONGEST - 1000);
      const uint8_t *m = buf + next_random() % 64;
      reference_crc(&crcs[i], m, n, want);
      for (size_t k = 0; k < NPATHS; k++) {
        if (!use_path(a, k)) continue;
        hq_hash(a->info.id, m, n, NULL, 0, got, 0);
        check(memcmp(got, want, a->info.digest_len) == 0,
              "reference mismatch", a->info.name, a->impl, n,
              (size_t)(m - buf));
      }
    }
  }
  hq_algo *md5 = hq_algo_by_id(HQ_MD5);
  for (size_t len = 0; len <= 1000 + 4; len++) {
    size_t n = len <= 1000 ? len : 1001 + next_random() % (LONGEST - 1000);
    const uint8_t *m = buf + next_random() % 64;
    uint8_t want16[16], got16[16];
    reference_md5(m, n, want16);
    hq_hash(HQ_MD5, m, n, NULL, 0, got16, 0);
    check(memcmp(got16, want16, 16) == 0, "reference mismatch", "md5",
          md5->impl, n, (size_t)(m - buf));
  }
  free(buf);
}

/* Cut the message at every point (with a state round trip there), and into
 * random pieces that switch implementation path from piece to piece. */
static void check_splits(void) {
  enum { LEN = 700 };
  static const char *names[] = {"md5", "crc32", "crc32c", "crc64nvme"};
  uint8_t msg[LEN], want[16], got[16];
  fill_random(msg, LEN);
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    hq_algo *a = hq_algo_by_id(hq_find(names[i]));
    use_path(a, 0);
    hq_hash(a->info.id, msg, LEN, NULL, 0, want, 0);
    for (size_t k = 0; k < NPATHS; k++) {
      if (!use_path(a, k)) continue;
      for (size_t at = 0; at <= LEN; at++) {
        size_t cut[2] = {at, LEN};
        check(digest_in_pieces(a, msg, cut, 1, NULL, got) == 0 &&
                  memcmp(got, want, a->info.digest_len) == 0,
              "split", a->info.name, a->impl, LEN, at);
      }
    }
    for (int round = 0; round < 200; round++) {
      size_t cut[9], paths[9], n = 1 + next_random() % 7;
      for (size_t j = 0; j < n; j++) cut[j] = next_random() % (LEN + 1);
      for (size_t j = 1; j < n; j++) /* insertion sort */
        for (size_t q = j; q && cut[q - 1] > cut[q]; q--) {
          size_t t = cut[q]; cut[q] = cut[q - 1]; cut[q - 1] = t;
        }
      cut[n] = LEN;
      for (size_t j = 0; j <= n; j++) paths[j] = next_random() % NPATHS;
      check(digest_in_pieces(a, msg, cut, n, paths, got) == 0 &&
                memcmp(got, want, a->info.digest_len) == 0,
            "random pieces across paths", a->info.name, "mixed", LEN,
            (size_t)round);
    }
  }
}

int hq_test_checksums(void) {
  static const char *names[] = {"md5", "crc32", "crc32c", "crc64nvme"};
  uint32_t dispatched = hq_cpu_features();
  failures = 0;
  checks = 0;
  hq_dispatch_init(0);
  cpu_real = hq_cpu_features();
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    check(hq_find(names[i]) >= 0, "registered", names[i], "", 0, 0);
  if (!failures) {
    check_published();
    check_against_reference();
    check_splits();
  }
  hq_dispatch_init(dispatched == 0 && cpu_real != 0);
  printf("checksums: %ld checks, %d failed\n", checks, failures);
  return failures;
}
