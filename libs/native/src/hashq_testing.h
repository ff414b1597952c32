/*
 * hashq — hooks for tests and benchmarks, beside the public API (hashq.h):
 * hiding CPU features from dispatch, so one machine runs every code path it
 * has, the CPU's cycle counter, and hq_update_fd's mapped reads.
 */
#ifndef HASHQ_TESTING_H
#define HASHQ_TESTING_H

#include "hashq.h"

#ifdef __cplusplus
extern "C" {
#endif

/* CPU features by name, for hiding some from dispatch (tests cover every
 * path a machine has this way; users can sidestep a path). Names: ssse3,
 * sse4.1, sse4.2, sha, bmi1, bmi2, pclmul, avx2, vpclmul, avx512vl (x86-64);
 * sha1, sha2, sha512, crc32, pmull (arm64); zbb, zknh, zbc (riscv64).
 * hq_cpu_feature_bits parses a comma-separated list into *bits: 0 on
 * success, else the 1-based position of the first unknown name. */
int hq_cpu_feature_bits(const char *list, uint32_t *bits);
/* The name of the single feature bit `bit`, or NULL. */
const char *hq_cpu_feature_name(uint32_t bit);
/* Dispatch as hq_dispatch_init(0) with the features in `hidden` treated as
 * absent. */
void hq_dispatch_init_hiding(uint32_t hidden);
/* The features dispatch uses now (after hiding), and the ones the CPU has. */
uint32_t hq_cpu_features(void);
uint32_t hq_cpu_detected(void);

/* CPU cycle counter (rdtsc / cntvct_el0 / rdcycle→rdtime / monotonic ns). */
uint64_t hq_cpucycles(void);
const char *hq_cpucycles_source(void);

/* hq_update_fd's mapped reads (src/file_map.c): off (enabled 0: pread
 * only) or on, and on_mapped (NULL: none) called with the descriptor and
 * arg once a window of the file is mapped, before any of it is read (tests
 * shrink the file there). */
void hq_testing_file_map(int enabled, void (*on_mapped)(int fd, void *arg),
                         void *arg);

#ifdef __cplusplus
}
#endif
#endif
