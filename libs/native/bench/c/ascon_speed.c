/*
 * Speed of the Ascon block loops without Node: each algorithm on the path
 * dispatch picks (bmi2 on x86-64 CPUs with BMI1+BMI2) and on the portable
 * path, the two alternating run by run so that both see the same machine
 * load (this machine is shared: compare the two columns of one run, not
 * runs with each other). No other library implements Ascon here, so the
 * portable build is the peer.
 *
 * Figures are counter ticks from hq_cpucycles() (on x86-64 the TSC, which
 * need not tick at the core clock) per byte: minimum, Q1 and median over
 * RUNS runs, and MB/s from the minimum. long: one 64 KiB update of a
 * streaming hash per run (a 1 MiB message cycled); 64B: 100 one-shot
 * hashes of 64 bytes per run.
 *
 *   make -C libs/native/bench/c ascon && out/ascon_speed [algo...]
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hashq_testing.h"
#include "bench_util.h"

#define MIB (1u << 20)
#define LONG (64u << 10)
#define SHORT 64
#define SHORT_REPS 100
#define RUNS 301

static uint8_t *buf;

static _Alignas(8) uint8_t ctx[2][HQ_CTX_SIZE];

/* one run on the current path: ticks for one LONG-byte update (the
 * message continues from run to run) or SHORT_REPS one-shot hashes */
static double run(int id, int path, int r, int long_msg) {
  uint8_t out[32];
  hq_ctx *c = (hq_ctx *)ctx[path];
  if (long_msg && r == 0) hq_init(c, id, NULL, 0, 0);
  uint64_t t0 = hq_cpucycles();
  if (long_msg) {
    hq_update(c, buf + (size_t)r * LONG % MIB, LONG);
  } else {
    for (int i = 0; i < SHORT_REPS; i++)
      hq_hash(id, buf + (i & 63), SHORT, NULL, 0, out, 0);
  }
  return (double)(hq_cpucycles() - t0);
}

int main(int argc, char **argv) {
  static const char *all[] = {"ascon-hash256", "ascon-xof128",
                              "asconhashv12", "asconhashav12"};
  const char **names = argc > 1 ? (const char **)argv + 1 : all;
  int count = argc > 1 ? argc - 1 : 4;
  static double t[2][RUNS];
  buf = malloc(MIB + 64);
  if (!buf) return 1;
  for (size_t i = 0; i < MIB + 64; i++) buf[i] = (uint8_t)(i * 131 + 7);
  double hz = counter_rate();
  hq_dispatch_init(0);
  printf("counter %s at %.3f GHz; %d runs, dispatched path alternating with "
         "portable; ticks/byte min Q1 median; MB/s from the minimum\n",
         hq_cpucycles_source(), hz / 1e9, RUNS);
  printf("%-14s %-4s %-9s %6s %20s | %-9s %6s %20s | ratio (min, median)\n",
         "algo", "msg", "path", "MB/s", "ticks/B", "path", "MB/s", "ticks/B");
  for (int i = 0; i < count; i++) {
    int id = hq_find(names[i]);
    if (id < 0) {
      fprintf(stderr, "unknown algorithm %s\n", names[i]);
      return 1;
    }
    const char *fast = hq_implementation(id);
    for (int long_msg = 1; long_msg >= 0; long_msg--) {
      double bytes = long_msg ? LONG : (double)SHORT * SHORT_REPS;
      for (int r = 0; r < RUNS; r++) {
        for (int path = 0; path < 2; path++) {
          hq_dispatch_init(path); /* 1: portable */
          t[path][r] = run(id, path, r, long_msg) / bytes;
        }
      }
      hq_dispatch_init(0);
      printf("%-14s %-4s", names[i], long_msg ? "long" : "64B");
      for (int path = 0; path < 2; path++) {
        qsort(t[path], RUNS, sizeof t[path][0], cmp);
        printf(" %-9s %6.0f %6.2f %6.2f %6.2f%s", path ? "portable" : fast,
               hz / t[path][0] / 1e6, t[path][0], t[path][RUNS / 4],
               t[path][RUNS / 2], path ? " |" : " |");
      }
      printf(" %5.2fx %5.2fx\n", t[1][0] / t[0][0],
             t[1][RUNS / 2] / t[0][RUNS / 2]);
    }
  }
  free(buf);
  return 0;
}
