/*
 * Cross-check of the x86-64 SHA-512 block functions that dispatch does not
 * pick on this CPU (make check covers only the dispatched and the portable
 * path): hq_sha512_blocks_avx2 and, where the CPU has AVX-512VL,
 * hq_sha512_blocks_avx512vl, against the portable path, on 1..40 blocks of
 * pseudo-random data from several chaining values. Exit status 1 on any
 * difference.
 *
 *   make -C libs/native/bench/c paths
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "hashq_testing.h"

#if defined(HQ_X86_64)

int main(void) {
  static uint8_t msg[40 * 128];
  uint64_t x = 0x9e3779b97f4a7c15;
  for (size_t i = 0; i < sizeof msg; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
    msg[i] = (uint8_t)x;
  }
  hq_dispatch_init(1);
  hq_algo *portable = hq_algo_by_id(HQ_SHA512);
  void (*ref)(hq_ctx *, const uint8_t *, size_t) = portable->blocks;
  hq_dispatch_init(0);
  uint32_t cpu = hq_cpu_features();
  struct { const char *name; void (*f)(hq_ctx *, const uint8_t *, size_t);
           uint32_t need; } paths[] = {
      {"avx2", hq_sha512_blocks_avx2, HQ_CPU_X86_AVX2 | HQ_CPU_X86_BMI2},
      {"avx512vl", hq_sha512_blocks_avx512vl,
       HQ_CPU_X86_AVX2 | HQ_CPU_X86_BMI2 | HQ_CPU_X86_AVX512VL}};
  int bad = 0;
  for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
    if ((cpu & paths[p].need) != paths[p].need) {
      printf("%-9s not on this CPU\n", paths[p].name);
      continue;
    }
    int fails = 0, runs = 0;
    for (size_t n = 1; n <= 40; n++)
      for (size_t off = 0; off + n * 128 <= sizeof msg; off += 1000) {
        hq_ctx a, b;
        memset(&a, 0, sizeof a);
        for (int i = 0; i < 8; i++) a.s.w64[i] = (uint64_t)(off + i) * x;
        b = a;
        ref(&a, msg + off, n);
        paths[p].f(&b, msg + off, n);
        fails += memcmp(a.s.w64, b.s.w64, 64) != 0;
        runs++;
      }
    printf("%-9s %d runs, %d differ from portable\n", paths[p].name, runs,
           fails);
    bad |= fails != 0;
  }
  return bad;
}
#else
int main(void) { puts("not x86-64"); return 0; }
#endif
