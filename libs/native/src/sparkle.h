/*
 * The SPARKLE permutations SPARKLE384 (6 branches) and SPARKLE512 (8
 * branches) on host-order 32-bit words. Branch j is the pair (x_j, y_j),
 * stored in memory as s[2j] = x_j, s[2j+1] = y_j (the byte order of the
 * Esch rate: x0 y0 x1 y1, each little-endian).
 * Source: C. Beierle et al., "Schwaemm and Esch: Lightweight Authenticated
 * Encryption and Hashing using the Sparkle Permutation Family", NIST LWC
 * final-round submission v1.2 (2021), section 2 (Alzette, round constants
 * c_0..c_7, linear layer L_{n_b}).
 *
 * The code works on local variables x0.. / y0..; a step is a macro so that
 * the Esch absorb loop keeps the whole state in registers across blocks.
 */
#ifndef HASHQ_SPARKLE_H
#define HASHQ_SPARKLE_H

#include "internal.h"

/* c_0..c_7: the fractional digits of e (spec, section 2.1). */
#define SPARKLE_C0 0xB7E15162u
#define SPARKLE_C1 0xBF715880u
#define SPARKLE_C2 0x38B4DA56u
#define SPARKLE_C3 0x324E7738u
#define SPARKLE_C4 0xBB1185EBu
#define SPARKLE_C5 0x4F7C7B57u
#define SPARKLE_C6 0xCFBFA1C8u
#define SPARKLE_C7 0xC2B3293Du

static const uint32_t sparkle_rcon[8] = {SPARKLE_C0, SPARKLE_C1, SPARKLE_C2,
                                         SPARKLE_C3, SPARKLE_C4, SPARKLE_C5,
                                         SPARKLE_C6, SPARKLE_C7};

/* The ARX-box Alzette with constant c: four rounds with the rotation
 * amounts (31, 24), (17, 17), (0, 31), (24, 16). */
#define ALZETTE(x, y, c)                                                      \
  do {                                                                        \
    x += hq_rotr32(y, 31); y ^= hq_rotr32(x, 24); x ^= (c);                   \
    x += hq_rotr32(y, 17); y ^= hq_rotr32(x, 17); x ^= (c);                   \
    x += y;                y ^= hq_rotr32(x, 31); x ^= (c);                   \
    x += hq_rotr32(y, 24); y ^= hq_rotr32(x, 16); x ^= (c);                   \
  } while (0)

/* The linear function l(x) = (x ^ (x << 16)) >>> 16 of the Feistel layer. */
#define SPARKLE_ELL(x) hq_rotr32((x) ^ ((x) << 16), 16)

/* One step of SPARKLE384 with step counter i: constants, 6 Alzettes, then
 * L_6: the right half gets the left half plus the Feistel value (tx from
 * the x words goes to the y words and vice versa), and the halves swap
 * with the new left half rotated by one branch. */
#define SPARKLE384_STEP(i)                                                    \
  do {                                                                        \
    y0 ^= sparkle_rcon[(i) & 7];                                              \
    y1 ^= (uint32_t)(i);                                                      \
    ALZETTE(x0, y0, SPARKLE_C0); ALZETTE(x1, y1, SPARKLE_C1);                 \
    ALZETTE(x2, y2, SPARKLE_C2); ALZETTE(x3, y3, SPARKLE_C3);                 \
    ALZETTE(x4, y4, SPARKLE_C4); ALZETTE(x5, y5, SPARKLE_C5);                 \
    uint32_t tx = SPARKLE_ELL(x0 ^ x1 ^ x2), ty = SPARKLE_ELL(y0 ^ y1 ^ y2);  \
    uint32_t u0 = x0, u1 = x1, u2 = x2, v0 = y0, v1 = y1, v2 = y2;            \
    x0 = x4 ^ u1 ^ ty; x1 = x5 ^ u2 ^ ty; x2 = x3 ^ u0 ^ ty;                  \
    y0 = y4 ^ v1 ^ tx; y1 = y5 ^ v2 ^ tx; y2 = y3 ^ v0 ^ tx;                  \
    x3 = u0; x4 = u1; x5 = u2;                                                \
    y3 = v0; y4 = v1; y5 = v2;                                                \
  } while (0)

/* One step of SPARKLE512 (L_8, same shape as L_6 with 4 branches a half). */
#define SPARKLE512_STEP(i)                                                    \
  do {                                                                        \
    y0 ^= sparkle_rcon[(i) & 7];                                              \
    y1 ^= (uint32_t)(i);                                                      \
    ALZETTE(x0, y0, SPARKLE_C0); ALZETTE(x1, y1, SPARKLE_C1);                 \
    ALZETTE(x2, y2, SPARKLE_C2); ALZETTE(x3, y3, SPARKLE_C3);                 \
    ALZETTE(x4, y4, SPARKLE_C4); ALZETTE(x5, y5, SPARKLE_C5);                 \
    ALZETTE(x6, y6, SPARKLE_C6); ALZETTE(x7, y7, SPARKLE_C7);                 \
    uint32_t tx = SPARKLE_ELL(x0 ^ x1 ^ x2 ^ x3);                             \
    uint32_t ty = SPARKLE_ELL(y0 ^ y1 ^ y2 ^ y3);                             \
    uint32_t u0 = x0, u1 = x1, u2 = x2, u3 = x3;                              \
    uint32_t v0 = y0, v1 = y1, v2 = y2, v3 = y3;                              \
    x0 = x5 ^ u1 ^ ty; x1 = x6 ^ u2 ^ ty; x2 = x7 ^ u3 ^ ty;                  \
    x3 = x4 ^ u0 ^ ty;                                                        \
    y0 = y5 ^ v1 ^ tx; y1 = y6 ^ v2 ^ tx; y2 = y7 ^ v3 ^ tx;                  \
    y3 = y4 ^ v0 ^ tx;                                                        \
    x4 = u0; x5 = u1; x6 = u2; x7 = u3;                                       \
    y4 = v0; y5 = v1; y6 = v2; y7 = v3;                                       \
  } while (0)

#define SPARKLE384_LOAD(s)                                                    \
  uint32_t x0 = (s)[0], y0 = (s)[1], x1 = (s)[2], y1 = (s)[3];                \
  uint32_t x2 = (s)[4], y2 = (s)[5], x3 = (s)[6], y3 = (s)[7];                \
  uint32_t x4 = (s)[8], y4 = (s)[9], x5 = (s)[10], y5 = (s)[11]

#define SPARKLE384_STORE(s)                                                   \
  do {                                                                        \
    (s)[0] = x0; (s)[1] = y0; (s)[2] = x1; (s)[3] = y1;                       \
    (s)[4] = x2; (s)[5] = y2; (s)[6] = x3; (s)[7] = y3;                       \
    (s)[8] = x4; (s)[9] = y4; (s)[10] = x5; (s)[11] = y5;                     \
  } while (0)

#define SPARKLE512_LOAD(s)                                                    \
  SPARKLE384_LOAD(s);                                                         \
  uint32_t x6 = (s)[12], y6 = (s)[13], x7 = (s)[14], y7 = (s)[15]

#define SPARKLE512_STORE(s)                                                   \
  do {                                                                        \
    SPARKLE384_STORE(s);                                                      \
    (s)[12] = x6; (s)[13] = y6; (s)[14] = x7; (s)[15] = y7;                   \
  } while (0)

static inline void sparkle384(uint32_t s[12], unsigned steps) {
  SPARKLE384_LOAD(s);
  for (unsigned i = 0; i < steps; i++) SPARKLE384_STEP(i);
  SPARKLE384_STORE(s);
}

static inline void sparkle512(uint32_t s[16], unsigned steps) {
  SPARKLE512_LOAD(s);
  for (unsigned i = 0; i < steps; i++) SPARKLE512_STEP(i);
  SPARKLE512_STORE(s);
}

#endif
