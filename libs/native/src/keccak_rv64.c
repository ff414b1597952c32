/*
 * Keccak-f[1600] for rv64gc (keccak_rv64.h): lane complementing turns most
 * of chi's NOT-AND pairs into one AND or OR, as in the portable build.
 */
#define KECCAK_COMPLEMENT 1
#define KECCAK_RV(f) hq_keccak_##f##_rv64
#include "keccak_rv64.h"
typedef int hq_keccak_rv64_unused; /* ISO C forbids an empty file */
