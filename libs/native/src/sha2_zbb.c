/*
 * SHA-256 and SHA-512 for riscv64 with Zbb (sha2_rv64.h), built with
 * -march=rv64gc_zbb: the compiler turns the rotations into ror/rori and
 * the byte swaps into rev8.
 */
#if defined(__riscv) && !defined(__riscv_zbb)
#error "sha2_zbb.c is built with -march=rv64gc_zbb"
#endif
#define SHA2_RV(f) hq_##f##_zbb
#include "sha2_rv64.h"
typedef int hq_sha2_zbb_unused; /* ISO C forbids an empty file */
