/*
 * Speed of the SHA-1/SHA-2 paths without Node, on every path this CPU has
 * (dispatched, then forced portable): 1 MiB updates and 64-byte one-shot
 * hashes. Built with OpenSSL (make openssl), each run of ours alternates
 * with the same work through OpenSSL's EVP API, so both see the same
 * machine load and the ratio is fair on a shared machine.
 *
 * Figures are counter ticks from hq_cpucycles() (on x86-64 the TSC, which
 * need not tick at the core clock) per byte: minimum, Q1 and median over
 * RUNS short runs (on a loaded machine the minimum is the least disturbed
 * run), and MB/s derived from the minimum. Long messages: a 1 MiB message
 * fed as 64 KiB updates (runs stay short enough to dodge preemption).
 * "2x": two long messages at once through hq_update2 (where this path
 * pairs them) against OpenSSL hashing the same two one after the other;
 * MB/s counts the bytes of both.
 *
 *   make -C libs/native/bench/c [openssl] && out/sha_speed[_openssl] [algo...]
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hashq_testing.h"
#include "bench_util.h"
#ifdef HQ_BENCH_OPENSSL
#include <openssl/evp.h>
#endif

#define MIB (1u << 20)
#define LONG (64u << 10) /* bytes per timed update of a long message */
#define SHORT 64
#define SHORT_REPS 100
#define RUNS 301

static uint8_t *buf;
static double tsc_hz;

struct quartiles { double min, q1, median; };

static struct quartiles summarize(double *ticks) {
  qsort(ticks, RUNS, sizeof ticks[0], cmp);
  return (struct quartiles){ticks[0], ticks[RUNS / 4], ticks[RUNS / 2]};
}

/* one run: ticks for one LONG-byte update of a long message (at offset
 * r * LONG mod 1 MiB), or SHORT_REPS one-shot hashes of SHORT bytes */
static _Alignas(8) uint8_t ctx[HQ_CTX_SIZE], ctx2[HQ_CTX_SIZE];

static double run_ours(int id, int r, int long_msg) {
  uint8_t out[64];
  if (long_msg && r == 0) hq_init((hq_ctx *)ctx, id, NULL, 0, 0);
  if (long_msg == 2 && r == 0) hq_init((hq_ctx *)ctx2, id, NULL, 0, 0);
  uint64_t t0 = hq_cpucycles();
  if (long_msg == 2) {
    const uint8_t *p = buf + (size_t)r * LONG % MIB;
    hq_update2((hq_ctx *)ctx, p, LONG, (hq_ctx *)ctx2,
               buf + ((size_t)r * LONG + MIB / 2) % MIB, LONG);
  } else if (long_msg) {
    hq_update((hq_ctx *)ctx, buf + (size_t)r * LONG % MIB, LONG);
  } else {
    for (int i = 0; i < SHORT_REPS; i++)
      hq_hash(id, buf + (i & 63), SHORT, NULL, 0, out, 0);
  }
  return (double)(hq_cpucycles() - t0);
}

#ifdef HQ_BENCH_OPENSSL
static EVP_MD_CTX *evp, *evp2;

static double run_openssl(const char *name, int r, int long_msg) {
  const EVP_MD *md = EVP_get_digestbyname(name);
  uint8_t out[64];
  unsigned outlen;
  if (!evp) evp = EVP_MD_CTX_new(), evp2 = EVP_MD_CTX_new();
  if (long_msg && r == 0) EVP_DigestInit_ex(evp, md, NULL);
  if (long_msg == 2 && r == 0) EVP_DigestInit_ex(evp2, md, NULL);
  uint64_t t0 = hq_cpucycles();
  if (long_msg == 2) {
    EVP_DigestUpdate(evp, buf + (size_t)r * LONG % MIB, LONG);
    EVP_DigestUpdate(evp2, buf + ((size_t)r * LONG + MIB / 2) % MIB, LONG);
  } else if (long_msg) {
    EVP_DigestUpdate(evp, buf + (size_t)r * LONG % MIB, LONG);
  } else {
    for (int i = 0; i < SHORT_REPS; i++)
      EVP_Digest(buf + (i & 63), SHORT, out, &outlen, md, NULL);
  }
  return (double)(hq_cpucycles() - t0);
}
#endif

static void report(const char *name, const char *path, int long_msg) {
  double ours[RUNS], ref[RUNS];
  int id = hq_find(name);
  double bytes = long_msg ? (double)LONG * long_msg : (double)SHORT * SHORT_REPS;
  int have_ref = 0;
  for (int r = 0; r < RUNS; r++) {
    ours[r] = run_ours(id, r, long_msg);
#ifdef HQ_BENCH_OPENSSL
    ref[r] = run_openssl(name, r, long_msg);
    have_ref = 1;
#endif
  }
  struct quartiles q = summarize(ours);
  printf("%-7s %-9s %-4s %6.0f %6.2f %6.2f %6.2f", name, path,
         long_msg == 2 ? "2x" : long_msg ? "long" : "64B", bytes / q.min * tsc_hz / 1e6,
         q.min / bytes, q.q1 / bytes, q.median / bytes);
  if (have_ref) {
    struct quartiles o = summarize(ref);
    printf(" | %6.0f %6.2f %6.2f %6.2f | %5.2fx %5.2fx",
           bytes / o.min * tsc_hz / 1e6, o.min / bytes, o.q1 / bytes,
           o.median / bytes, o.min / q.min, o.median / q.median);
  }
  printf("\n");
}

int main(int argc, char **argv) {
  static const char *all[] = {"sha1", "sha224", "sha256", "sha384", "sha512"};
  const char **names = argc > 1 ? (const char **)argv + 1 : all;
  int count = argc > 1 ? argc - 1 : 5;
  buf = malloc(MIB + 64);
  for (size_t i = 0; i < MIB + 64; i++) buf[i] = (uint8_t)(i * 131 + 7);
  tsc_hz = counter_rate();
  printf("counter %s at %.3f GHz; %d runs, ours alternating with OpenSSL; "
         "MB/s from the minimum; ticks/byte min Q1 median; long = 64 KiB "
         "updates\n",
         hq_cpucycles_source(), tsc_hz / 1e9, RUNS);
  printf("%-7s %-9s %-4s %6s %20s | %6s %20s | speedup (min, median)\n",
         "algo", "path", "msg", "MB/s", "ticks/B", "OpenSSL", "ticks/B");
  for (int portable = 0; portable <= 1; portable++) {
    hq_dispatch_init(portable);
    for (int i = 0; i < count; i++) {
      int id = hq_find(names[i]);
      if (id < 0) {
        fprintf(stderr, "unknown algorithm %s\n", names[i]);
        return 1;
      }
      const char *path = hq_implementation(id);
      if (portable && strcmp(path, "portable")) continue;
      report(names[i], path, 1);
      hq_init((hq_ctx *)ctx, id, NULL, 0, 0);
      hq_init((hq_ctx *)ctx2, id, NULL, 0, 0);
      if (hq_pairable((hq_ctx *)ctx, (hq_ctx *)ctx2)) report(names[i], path, 2);
      report(names[i], path, 0);
    }
  }
  free(buf);
  return 0;
}
