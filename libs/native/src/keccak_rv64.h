/*
 * The Keccak-f[1600] block loops of the riscv64 builds (keccak_rv64.c for
 * rv64gc, keccak_zbb.c for Zbb): keccak_perm.h reading whole lanes with
 * one load where the input is 8-byte aligned; an unaligned input is copied
 * block by block into an aligned buffer first (rv64gc does not promise
 * fast misaligned loads, and byte loads cost about 2.7 instructions per
 * byte). The includer defines KECCAK_COMPLEMENT and KECCAK_RV(f), the
 * public name of each entry point.
 */
#include "internal.h"

#if defined(HQ_RISCV64)
#define KECCAK_TARGET static
#define KECCAK_NAME(f) keccak_##f##_aligned
#define KECCAK_LOAD(p) hq_load64_le_aligned(p)
#include "keccak_perm.h"

void KECCAK_RV(f1600)(uint64_t *s) { keccak_f1600_aligned(s); }

#define KECCAK_RV_BLOCKS(rate)                                             \
  void KECCAK_RV(blocks_r##rate)(hq_ctx *c, const uint8_t *in, size_t n) { \
    if (hq_aligned8(in)) {                                                 \
      keccak_blocks_r##rate##_aligned(c, in, n);                           \
      return;                                                              \
    }                                                                      \
    uint64_t block[(rate) / 8];                                            \
    for (; n--; in += (rate)) {                                            \
      memcpy(block, in, (rate));                                           \
      keccak_blocks_r##rate##_aligned(c, (const uint8_t *)block, 1);       \
    }                                                                      \
  }
KECCAK_RV_BLOCKS(72)
KECCAK_RV_BLOCKS(136)
KECCAK_RV_BLOCKS(168)
#endif
