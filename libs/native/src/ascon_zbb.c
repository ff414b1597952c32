/*
 * Ascon for riscv64 with Zbb (ascon_rv64.h), built with -march=rv64gc_zbb:
 * andn folds the S-box's NOT-AND pairs, rori rotates in one instruction and
 * rev8 swaps the bytes of a big-endian block.
 */
#if defined(__riscv) && !defined(__riscv_zbb)
#error "ascon_zbb.c is built with -march=rv64gc_zbb"
#endif
#include "internal.h"

#if defined(HQ_RISCV64)
#define ASCON_COMPLEMENT 0
#define ASCON_BSWAP64(x) __builtin_bswap64(x)
#define ASCON_NAME(f) hq_ascon_##f##_zbb
#include "ascon_rv64.h"
#else
typedef int hq_ascon_zbb_unused; /* ISO C forbids an empty file */
#endif
