/*
 * The Xoodoo[12] permutation on 12 host-order 32-bit lanes, lane (x, y) at
 * index x + 4y, byte i of the state in lane i / 4, little-endian.
 * Source: J. Daemen, S. Hoffert, M. Peeters, G. Van Assche, R. Van Keer,
 * "Xoodyak, a lightweight cryptographic scheme", NIST LWC final-round
 * submission (2021), section 2 (round function, round constants).
 *
 * The round is written on 12 local variables and fully unrolled, so the
 * plane shifts of rho-west and rho-east are register renamings, not moves.
 */
#ifndef HASHQ_XOODOO_H
#define HASHQ_XOODOO_H

#include "internal.h"

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

/* Xoodoo[12] on the local lanes a0..a11; round constants C_{-11}..C_0. */
#define XOODOO_PERMUTE()                                                      \
  do {                                                                        \
    XOODOO_ROUND(0x00000058u); XOODOO_ROUND(0x00000038u);                    \
    XOODOO_ROUND(0x000003C0u); XOODOO_ROUND(0x000000D0u);                    \
    XOODOO_ROUND(0x00000120u); XOODOO_ROUND(0x00000014u);                    \
    XOODOO_ROUND(0x00000060u); XOODOO_ROUND(0x0000002Cu);                    \
    XOODOO_ROUND(0x00000380u); XOODOO_ROUND(0x000000F0u);                    \
    XOODOO_ROUND(0x000001A0u); XOODOO_ROUND(0x00000012u);                    \
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

/* Xoodoo[12] on a state held in memory. */
static inline void xoodoo_permute(uint32_t s[12]) {
  XOODOO_LOAD(s);
  XOODOO_PERMUTE();
  XOODOO_STORE(s);
}

#endif
