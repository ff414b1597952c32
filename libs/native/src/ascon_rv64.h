/*
 * The Ascon block loops of the riscv64 builds (ascon_rv64.c for rv64gc,
 * ascon_zbb.c for Zbb): ascon_perm.h reading a block with one load where
 * it is 8-byte aligned (rv64gc promises no fast misaligned loads), byte by
 * byte otherwise. The includer defines ASCON_COMPLEMENT, ASCON_BSWAP64(x)
 * and ASCON_NAME(f).
 */
#include "internal.h"

#if defined(HQ_RISCV64)
static inline uint64_t ascon_load_rv(const uint8_t *p, int big_endian) {
  if (!hq_aligned8(p)) return big_endian ? hq_load64_be(p) : hq_load64_le(p);
  uint64_t v = hq_load64_le_aligned(p);
  return big_endian ? ASCON_BSWAP64(v) : v;
}
#define ASCON_LOAD(p, big_endian) ascon_load_rv(p, big_endian)
#define ASCON_TARGET
#include "ascon_perm.h"
#endif
