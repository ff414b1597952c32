/*
 * Keccak-f[1600] for riscv64 with Zbb (keccak_rv64.h), built with
 * -march=rv64gc_zbb: rori rotates in one instruction and andn does chi's
 * NOT-AND, so no lane complementing.
 */
#if defined(__riscv) && !defined(__riscv_zbb)
#error "keccak_zbb.c is built with -march=rv64gc_zbb"
#endif
#define KECCAK_COMPLEMENT 0
#define KECCAK_RV(f) hq_keccak_##f##_zbb
#include "keccak_rv64.h"
typedef int hq_keccak_zbb_unused; /* ISO C forbids an empty file */
