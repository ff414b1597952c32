/*
 * The cycle counter used by the benchmark, read as cheaply as the CPU
 * allows. Note: on x86-64 the TSC ticks at a fixed rate that may differ from
 * the core clock; callers report ticks and calibrate.
 */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"
#include "hashq_testing.h"

#include <time.h>

#if defined(HQ_X86_64)
#include <x86intrin.h>
#endif

static inline uint64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t hq_cpucycles(void) {
#if defined(HQ_X86_64)
  return __rdtsc();
#elif defined(HQ_ARM64)
  uint64_t v;
  __asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v));
  return v;
#elif defined(HQ_RISCV64)
  /* rdcycle traps on kernels that hide the cycle CSR from user space;
   * rdtime is always readable (fixed-rate timer). */
  uint64_t v;
  __asm__ volatile("rdtime %0" : "=r"(v));
  return v;
#else
  return monotonic_ns();
#endif
}

const char *hq_cpucycles_source(void) {
#if defined(HQ_X86_64)
  return "rdtsc";
#elif defined(HQ_ARM64)
  return "cntvct_el0";
#elif defined(HQ_RISCV64)
  return "rdtime";
#else
  (void)monotonic_ns;
  return "clock_monotonic";
#endif
}
