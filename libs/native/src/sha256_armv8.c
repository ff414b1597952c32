/*
 * SHA-256 block function on the ARMv8 Cryptography Extensions (SHA256H,
 * SHA256H2, SHA256SU0, SHA256SU1). Chosen at run time by sha256.c when the
 * CPU reports HWCAP_SHA2; compiled with a per-function target so the rest
 * of the binary stays baseline armv8-a. Compiles to nothing elsewhere.
 */
#include "internal.h"

#if defined(HQ_ARM64)
#include <arm_neon.h>


/* Four rounds on W[4i..4i+3] in mi; for i < 12 the slot mi then receives
 * W[4i+16..4i+19] (FIPS 180-4 §6.2.2 step 1). SHA256H2 needs the {A..D}
 * from before SHA256H updated it. */
#define QROUND(i, mi, mi1, mi2, mi3)                                   \
  do {                                                                 \
    uint32x4_t wk = vaddq_u32(mi, vld1q_u32(hq_sha256_k + 4 * (i)));   \
    uint32x4_t abcd_in = abcd;                                         \
    abcd = vsha256hq_u32(abcd, efgh, wk);                              \
    efgh = vsha256h2q_u32(efgh, abcd_in, wk);                          \
    if ((i) < 12)                                                      \
      mi = vsha256su1q_u32(vsha256su0q_u32(mi, mi1), mi2, mi3);        \
  } while (0)

__attribute__((target("+crypto"))) void hq_sha256_blocks_armv8(
    hq_ctx *c, const uint8_t *in, size_t n) {
  uint32_t *s = c->s.w32;
  uint32x4_t abcd = vld1q_u32(s), efgh = vld1q_u32(s + 4);
  for (; n--; in += 64) {
    uint32x4_t abcd0 = abcd, efgh0 = efgh;
    uint32x4_t m0 = vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(in)));
    uint32x4_t m1 = vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(in + 16)));
    uint32x4_t m2 = vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(in + 32)));
    uint32x4_t m3 = vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(in + 48)));
    QROUND(0, m0, m1, m2, m3);
    QROUND(1, m1, m2, m3, m0);
    QROUND(2, m2, m3, m0, m1);
    QROUND(3, m3, m0, m1, m2);
    QROUND(4, m0, m1, m2, m3);
    QROUND(5, m1, m2, m3, m0);
    QROUND(6, m2, m3, m0, m1);
    QROUND(7, m3, m0, m1, m2);
    QROUND(8, m0, m1, m2, m3);
    QROUND(9, m1, m2, m3, m0);
    QROUND(10, m2, m3, m0, m1);
    QROUND(11, m3, m0, m1, m2);
    QROUND(12, m0, m1, m2, m3);
    QROUND(13, m1, m2, m3, m0);
    QROUND(14, m2, m3, m0, m1);
    QROUND(15, m3, m0, m1, m2);
    abcd = vaddq_u32(abcd, abcd0);
    efgh = vaddq_u32(efgh, efgh0);
  }
  vst1q_u32(s, abcd);
  vst1q_u32(s + 4, efgh);
}
#endif
