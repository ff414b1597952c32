/*
 * Helpers shared by the C speed harnesses (sha_speed.c, ascon_speed.c).
 * Include after <time.h> with _POSIX_C_SOURCE defined, and after hashq_testing.h.
 */
#ifndef HASHQ_BENCH_UTIL_H
#define HASHQ_BENCH_UTIL_H

/* qsort comparator for doubles */
static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* counter ticks per second, from a 200 ms sleep against CLOCK_MONOTONIC */
static double counter_rate(void) {
  struct timespec a, b, d = {0, 200000000};
  clock_gettime(CLOCK_MONOTONIC, &a);
  uint64_t c0 = hq_cpucycles();
  nanosleep(&d, NULL);
  uint64_t c1 = hq_cpucycles();
  clock_gettime(CLOCK_MONOTONIC, &b);
  double ns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
  return (double)(c1 - c0) / ns * 1e9;
}

#endif /* HASHQ_BENCH_UTIL_H */
