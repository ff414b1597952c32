/*
 * The Keccak-f[1600] block loops built for x86-64 CPUs with BMI1 and BMI2:
 * andn computes chi's NOT-AND in one instruction (so no lane
 * complementing) and rorx rotates without a copy. keccak.c picks them at
 * load time when cpuid reports both.
 */
#include "internal.h"

#if defined(HQ_X86_64)
#define KECCAK_COMPLEMENT 0
#define KECCAK_TARGET __attribute__((target("bmi,bmi2")))
#define KECCAK_NAME(f) hq_keccak_##f##_bmi
#include "keccak_perm.h"
#else
typedef int hq_keccak_bmi_unused; /* ISO C forbids an empty file */
#endif
