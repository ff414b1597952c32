/*
 * The Ascon block loops built for x86-64 CPUs with BMI1 and BMI2 (andn
 * folds the S-box's NOT-AND pairs, rorx rotates without a copy); ascon.c
 * picks them at load time when cpuid reports both.
 */
/*
 * Instruction order: the block loop is bound by integer-ALU throughput (37
 * ALU operations per round, no spills), and GCC's generic scheduling model
 * leaves the ALUs idle more often than its Zen models do, so the loop is
 * scheduled for Zen (tune= changes only the order of the instructions, not
 * which ones may be used; znver1 is known to GCC since 6) with
 * pre-allocation scheduling (measurements: README, implementation notes).
 * Set before internal.h so that its inline helpers get the same target and
 * inline.
 */
#if defined(__x86_64__) && defined(__GNUC__) && __GNUC__ >= 6 && !defined(__clang__)
#pragma GCC target("bmi,bmi2,tune=znver1")
#pragma GCC optimize("schedule-insns", "sched-pressure")
#endif
#include "internal.h"

#if defined(HQ_X86_64)
#define ASCON_TARGET __attribute__((target("bmi,bmi2")))
#define ASCON_NAME(f) hq_ascon_##f##_bmi
#include "ascon_perm.h"
#else
typedef int hq_ascon_bmi_unused; /* ISO C forbids an empty file */
#endif
