/*
 * The Ascon block loops built for x86-64 CPUs with BMI1 and BMI2 (andn
 * folds the S-box's NOT-AND pairs, rorx rotates without a copy); ascon.c
 * picks them at load time when cpuid reports both.
 */
#include "internal.h"

#if defined(HQ_X86_64)
#define ASCON_TARGET __attribute__((target("bmi,bmi2")))
#define ASCON_NAME(f) hq_ascon_##f##_bmi
void hq_ascon_permute_bmi(uint64_t *s, int rounds);
void hq_ascon_blocks_le12_bmi(hq_ctx *c, const uint8_t *in, size_t n);
void hq_ascon_blocks_be12_bmi(hq_ctx *c, const uint8_t *in, size_t n);
void hq_ascon_blocks_be8_bmi(hq_ctx *c, const uint8_t *in, size_t n);
#include "ascon_perm.h"
#else
typedef int hq_ascon_bmi_unused; /* ISO C forbids an empty file */
#endif
