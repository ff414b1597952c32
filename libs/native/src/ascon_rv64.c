/*
 * Ascon for rv64gc (ascon_rv64.h): x4 held complemented through the rounds
 * (ASCON_ROUND_NX4), which saves two NOTs a round where there is no
 * AND-NOT instruction; byte swaps of aligned big-endian blocks with masks.
 */
#include "internal.h"

#if defined(HQ_RISCV64)
static inline uint64_t bswap64_masks(uint64_t x) {
  const uint64_t m8 = 0x00ff00ff00ff00ffull, m16 = 0x0000ffff0000ffffull;
  x = (x & m8) << 8 | (x >> 8 & m8);
  x = (x & m16) << 16 | (x >> 16 & m16);
  return x << 32 | x >> 32;
}
#define ASCON_COMPLEMENT 1
#define ASCON_BSWAP64(x) bswap64_masks(x)
#define ASCON_NAME(f) hq_ascon_##f##_rv64
#include "ascon_rv64.h"
#else
typedef int hq_ascon_rv64_unused; /* ISO C forbids an empty file */
#endif
