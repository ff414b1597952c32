/*
 * The Xoodoo[12] permutation. In memory (ctx->s.w32): 12 host-order 32-bit
 * lanes, lane (x, y) at index x + 4y, byte i of the state in lane i / 4,
 * little-endian.
 * Source: J. Daemen, S. Hoffert, M. Peeters, G. Van Assche, R. Van Keer,
 * "Xoodyak, a lightweight cryptographic scheme", NIST LWC final-round
 * submission (2021), section 2 (round function, round constants).
 *
 * Two register layouts behind one set of macros (XOODOO_LOAD, _STORE,
 * _PERMUTE, _ADD_RATE16, _ADD_LANE4), both fully unrolled:
 *  - lanes: 12 uint32_t variables. The plane shifts of rho-west and
 *    rho-east are renamings and every rotation is one instruction where
 *    the CPU has a 32-bit rotate (x86-64, arm64).
 *  - pairs (riscv64): each plane in two uint64_t, lanes 0|1 and 2|3 (low
 *    half = lower lane). rv64gc has no rotate, so a rotation costs three
 *    instructions either way, but and/xor/not now cover two lanes at once,
 *    and GCC does not wrap every 32-bit operation in a sign extension as
 *    it does for uint32_t on rv64. About 30 % fewer instructions than
 *    the lanes layout there.
 * Define HQ_XOODOO_PAIRS=1 / 0 to force a layout: the x86-64 test run
 * covers lanes, the riscv64 (qemu) run covers pairs, and
 * -DHQ_XOODOO_PAIRS=1 runs pairs natively.
 */
#ifndef HASHQ_XOODOO_H
#define HASHQ_XOODOO_H

#include "internal.h"

#ifndef HQ_XOODOO_PAIRS
#if defined(HQ_RISCV64)
#define HQ_XOODOO_PAIRS 1
#else
#define HQ_XOODOO_PAIRS 0
#endif
#endif

/* Round constants C_{-11} .. C_0 for Xoodoo[12]; R is a round macro. */
#define XOODOO_ROUNDS(R)                                                      \
  do {                                                                        \
    R(0x00000058u); R(0x00000038u); R(0x000003C0u); R(0x000000D0u);           \
    R(0x00000120u); R(0x00000014u); R(0x00000060u); R(0x0000002Cu);           \
    R(0x00000380u); R(0x000000F0u); R(0x000001A0u); R(0x00000012u);           \
  } while (0)

#if !HQ_XOODOO_PAIRS

/* One round on a0..a11. rho-west's shift of plane 1 by one lane and
 * rho-east's shift of plane 2 by two lanes are folded into which input
 * lane feeds which output lane. */
#define XOODOO_ROUND(rc)                                                      \
  do {                                                                        \
    uint32_t p0 = a0 ^ a4 ^ a8, p1 = a1 ^ a5 ^ a9;                            \
    uint32_t p2 = a2 ^ a6 ^ a10, p3 = a3 ^ a7 ^ a11;                          \
    /* theta: E = P <<< (1,5) + P <<< (1,14) */                               \
    uint32_t e0 = hq_rotl32(p3, 5) ^ hq_rotl32(p3, 14);                       \
    uint32_t e1 = hq_rotl32(p0, 5) ^ hq_rotl32(p0, 14);                       \
    uint32_t e2 = hq_rotl32(p1, 5) ^ hq_rotl32(p1, 14);                       \
    uint32_t e3 = hq_rotl32(p2, 5) ^ hq_rotl32(p2, 14);                       \
    /* theta, rho-west (plane 1 <<< (1,0), plane 2 <<< (0,11)), iota:    \
     * column x of the new planes 0, 1, 2 */                                  \
    uint32_t b0 = a0 ^ e0 ^ (rc), c0 = a7 ^ e3, d0 = hq_rotl32(a8 ^ e0, 11);  \
    uint32_t b1 = a1 ^ e1, c1 = a4 ^ e0, d1 = hq_rotl32(a9 ^ e1, 11);         \
    uint32_t b2 = a2 ^ e2, c2 = a5 ^ e1, d2 = hq_rotl32(a10 ^ e2, 11);        \
    uint32_t b3 = a3 ^ e3, c3 = a6 ^ e2, d3 = hq_rotl32(a11 ^ e3, 11);        \
    /* chi, then rho-east (plane 1 <<< (0,1), plane 2 <<< (2,8)) */           \
    a0 = b0 ^ (~c0 & d0);                                                     \
    a1 = b1 ^ (~c1 & d1);                                                     \
    a2 = b2 ^ (~c2 & d2);                                                     \
    a3 = b3 ^ (~c3 & d3);                                                     \
    a4 = hq_rotl32(c0 ^ (~d0 & b0), 1);                                       \
    a5 = hq_rotl32(c1 ^ (~d1 & b1), 1);                                       \
    a6 = hq_rotl32(c2 ^ (~d2 & b2), 1);                                       \
    a7 = hq_rotl32(c3 ^ (~d3 & b3), 1);                                       \
    a8 = hq_rotl32(d2 ^ (~b2 & c2), 8);                                       \
    a9 = hq_rotl32(d3 ^ (~b3 & c3), 8);                                       \
    a10 = hq_rotl32(d0 ^ (~b0 & c0), 8);                                      \
    a11 = hq_rotl32(d1 ^ (~b1 & c1), 8);                                      \
  } while (0)

#define XOODOO_LOAD(s)                                                        \
  uint32_t a0 = (s)[0], a1 = (s)[1], a2 = (s)[2], a3 = (s)[3];                \
  uint32_t a4 = (s)[4], a5 = (s)[5], a6 = (s)[6], a7 = (s)[7];                \
  uint32_t a8 = (s)[8], a9 = (s)[9], a10 = (s)[10], a11 = (s)[11]

#define XOODOO_STORE(s)                                                       \
  do {                                                                        \
    (s)[0] = a0; (s)[1] = a1; (s)[2] = a2; (s)[3] = a3;                       \
    (s)[4] = a4; (s)[5] = a5; (s)[6] = a6; (s)[7] = a7;                       \
    (s)[8] = a8; (s)[9] = a9; (s)[10] = a10; (s)[11] = a11;                   \
  } while (0)

/* XOR 16 bytes into state bytes 0..15 (lanes 0..3). */
#define XOODOO_ADD_RATE16(in)                                                 \
  do {                                                                        \
    a0 ^= hq_load32_le(in); a1 ^= hq_load32_le((in) + 4);                     \
    a2 ^= hq_load32_le((in) + 8); a3 ^= hq_load32_le((in) + 12);              \
  } while (0)

/* XOR v into lane 4 (state bytes 16..19). */
#define XOODOO_ADD_LANE4(v) (a4 ^= (v))

#else /* HQ_XOODOO_PAIRS */

/* Replicated masks and per-half rotation of both 32-bit halves of x. */
#define XOODOO_LO(n) (UINT64_C(0x0000000100000001) * ((UINT64_C(1) << (n)) - 1))
#define XOODOO_ROT2(x, n)                                                     \
  ((((x) << (n)) & ~XOODOO_LO(n)) | (((x) >> (32 - (n))) & XOODOO_LO(n)))
/* Shift a plane (w0, w1) by one lane: lanes (l0 l1, l2 l3) -> (l3 l0,
 * l1 l2). */
#define XOODOO_SHIFT1(o0, o1, w0, w1)                                         \
  do {                                                                        \
    uint64_t s0_ = (w0), s1_ = (w1);                                          \
    o0 = (s1_ >> 32) | (s0_ << 32);                                           \
    o1 = (s0_ >> 32) | (s1_ << 32);                                           \
  } while (0)

/* One round on planes (a00 a01) (a10 a11) (a20 a21); the shift of plane
 * 2 by two lanes in rho-east swaps its two words. */
#define XOODOO_ROUND(rc)                                                      \
  do {                                                                        \
    uint64_t p0 = a00 ^ a10 ^ a20, p1 = a01 ^ a11 ^ a21, q0, q1;              \
    XOODOO_SHIFT1(q0, q1, p0, p1);                                            \
    uint64_t e0 = XOODOO_ROT2(q0, 5) ^ XOODOO_ROT2(q0, 14);                   \
    uint64_t e1 = XOODOO_ROT2(q1, 5) ^ XOODOO_ROT2(q1, 14);                   \
    uint64_t b00 = a00 ^ e0 ^ (rc), b01 = a01 ^ e1, b10, b11;                 \
    XOODOO_SHIFT1(b10, b11, a10 ^ e0, a11 ^ e1);                              \
    uint64_t b20 = XOODOO_ROT2(a20 ^ e0, 11);                                 \
    uint64_t b21 = XOODOO_ROT2(a21 ^ e1, 11);                                 \
    a00 = b00 ^ (~b10 & b20);                                                 \
    a01 = b01 ^ (~b11 & b21);                                                 \
    a10 = XOODOO_ROT2(b10 ^ (~b20 & b00), 1);                                 \
    a11 = XOODOO_ROT2(b11 ^ (~b21 & b01), 1);                                 \
    a20 = XOODOO_ROT2(b21 ^ (~b01 & b11), 8);                                 \
    a21 = XOODOO_ROT2(b20 ^ (~b00 & b10), 8);                                 \
  } while (0)

#define XOODOO_PAIR(s, i) ((uint64_t)(s)[i] | (uint64_t)(s)[(i) + 1] << 32)
#define XOODOO_LOAD(s)                                                        \
  uint64_t a00 = XOODOO_PAIR(s, 0), a01 = XOODOO_PAIR(s, 2);                  \
  uint64_t a10 = XOODOO_PAIR(s, 4), a11 = XOODOO_PAIR(s, 6);                  \
  uint64_t a20 = XOODOO_PAIR(s, 8), a21 = XOODOO_PAIR(s, 10)

#define XOODOO_STORE(s)                                                       \
  do {                                                                        \
    const uint64_t w_[6] = {a00, a01, a10, a11, a20, a21};                    \
    for (unsigned i_ = 0; i_ < 6; i_++) {                                     \
      (s)[2 * i_] = (uint32_t)w_[i_];                                         \
      (s)[2 * i_ + 1] = (uint32_t)(w_[i_] >> 32);                             \
    }                                                                         \
  } while (0)

#define XOODOO_ADD_RATE16(in)                                                 \
  do {                                                                        \
    a00 ^= hq_load64_le(in);                                                  \
    a01 ^= hq_load64_le((in) + 8);                                            \
  } while (0)

#define XOODOO_ADD_LANE4(v) (a10 ^= (uint32_t)(v))

#endif /* HQ_XOODOO_PAIRS */

/* Xoodoo[12] on the local state. */
#define XOODOO_PERMUTE() XOODOO_ROUNDS(XOODOO_ROUND)

/* Xoodoo[12] on a state held in memory. */
static inline void xoodoo_permute(uint32_t s[12]) {
  XOODOO_LOAD(s);
  XOODOO_PERMUTE();
  XOODOO_STORE(s);
}

#endif
