/*
 * SHA-1 block function on the ARMv8 Cryptography Extensions (SHA1C/P/M,
 * SHA1H, SHA1SU0, SHA1SU1). Chosen at run time by sha1.c when the CPU
 * reports HWCAP_SHA1; compiled with a per-function target so the rest of
 * the binary stays baseline armv8-a. Compiles to nothing elsewhere.
 */
#include "internal.h"

#if defined(HQ_ARM64)
#include <arm_neon.h>


/* Rounds 4q..4q+3: OP is SHA1C (Ch), SHA1P (parity) or SHA1M (Maj). The E
 * of the next quad is rotl 30 of this quad's incoming A (SHA1H). */
#define QROUND(OP, k, m)                                        \
  do {                                                          \
    uint32_t e_next = vsha1h_u32(vgetq_lane_u32(abcd, 0));      \
    abcd = OP(abcd, e, vaddq_u32(m, vdupq_n_u32(k)));           \
    e = e_next;                                                 \
  } while (0)
/* W[4q..4q+3] from the four previous quads (§6.1.2 step 1) */
#define EXPAND(m4, m3, m2, m1) \
  (m4 = vsha1su1q_u32(vsha1su0q_u32(m4, m3, m2), m1))
#define QROUND_X(OP, k, m4, m3, m2, m1) \
  do {                                  \
    EXPAND(m4, m3, m2, m1);             \
    QROUND(OP, k, m4);                  \
  } while (0)

/* §4.2.1 */
#define K0 0x5a827999u
#define K1 0x6ed9eba1u
#define K2 0x8f1bbcdcu
#define K3 0xca62c1d6u

__attribute__((target("+crypto"))) void hq_sha1_blocks_armv8(
    hq_ctx *c, const uint8_t *in, size_t n) {
  uint32_t *s = c->s.w32;
  uint32x4_t abcd = vld1q_u32(s);
  uint32_t e0 = s[4];
  for (; n--; in += 64) {
    uint32x4_t abcd0 = abcd;
    uint32_t e = e0;
    uint32x4_t m0 = vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(in)));
    uint32x4_t m1 = vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(in + 16)));
    uint32x4_t m2 = vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(in + 32)));
    uint32x4_t m3 = vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(in + 48)));
    QROUND(vsha1cq_u32, K0, m0);
    QROUND(vsha1cq_u32, K0, m1);
    QROUND(vsha1cq_u32, K0, m2);
    QROUND(vsha1cq_u32, K0, m3);
    QROUND_X(vsha1cq_u32, K0, m0, m1, m2, m3);
    QROUND_X(vsha1pq_u32, K1, m1, m2, m3, m0);
    QROUND_X(vsha1pq_u32, K1, m2, m3, m0, m1);
    QROUND_X(vsha1pq_u32, K1, m3, m0, m1, m2);
    QROUND_X(vsha1pq_u32, K1, m0, m1, m2, m3);
    QROUND_X(vsha1pq_u32, K1, m1, m2, m3, m0);
    QROUND_X(vsha1mq_u32, K2, m2, m3, m0, m1);
    QROUND_X(vsha1mq_u32, K2, m3, m0, m1, m2);
    QROUND_X(vsha1mq_u32, K2, m0, m1, m2, m3);
    QROUND_X(vsha1mq_u32, K2, m1, m2, m3, m0);
    QROUND_X(vsha1mq_u32, K2, m2, m3, m0, m1);
    QROUND_X(vsha1pq_u32, K3, m3, m0, m1, m2);
    QROUND_X(vsha1pq_u32, K3, m0, m1, m2, m3);
    QROUND_X(vsha1pq_u32, K3, m1, m2, m3, m0);
    QROUND_X(vsha1pq_u32, K3, m2, m3, m0, m1);
    QROUND_X(vsha1pq_u32, K3, m3, m0, m1, m2);
    abcd = vaddq_u32(abcd, abcd0);
    e0 += e;
  }
  vst1q_u32(s, abcd);
  s[4] = e0;
}
#endif
