/*
 * The Ascon permutation (NIST SP 800-232 §3; unchanged from Ascon v1.2) on
 * five 64-bit words in their natural, non-interleaved form, and the block
 * loops built on it. Included by ascon.c (portable build) and by
 * ascon_bmi.c (built for BMI1/BMI2, where the compiler turns NOT-AND into
 * andn and rotations into rorx): the includer defines ASCON_TARGET (storage
 * class and function attributes) and ASCON_NAME(f) (the per-build name).
 */
#ifndef HASHQ_ASCON_PERM_H
#define HASHQ_ASCON_PERM_H

#include "internal.h"

/*
 * One round on the locals x0..x4: the bitsliced 5-bit S-box (SP 800-232
 * §3.3, Figure 3) and the linear layer (§3.4), arranged for a short
 * dependency chain (the rounds are latency-bound):
 *  - x2 enters a round with its round constant already added: each round
 *    adds the NEXT round's constant cn in its linear layer, beside the
 *    rotations, and the S-box's final NOT of x2 is folded into it (~cn);
 *  - ~a & (b ^ a) == ~a & b, so t1 and t3 are taken from x2 and x4
 *    before the input XORs, one step earlier.
 */
#define ASCON_ROUND(cn)                                                  \
  do {                                                                   \
    uint64_t a0, a2, a4, t0, t1, t2, t3, t4, y0, y1, y2, y3, y4;          \
    a0 = x0 ^ x4;                                                        \
    a4 = x4 ^ x3;                                                        \
    a2 = x2 ^ x1;                                                        \
    t1 = ~x1 & x2;                                                       \
    t3 = ~x3 & x4;                                                       \
    t0 = ~a0 & x1;                                                       \
    t2 = ~a2 & x3;                                                       \
    t4 = ~a4 & a0;                                                       \
    y0 = a0 ^ t1;                                                        \
    y1 = x1 ^ t2;                                                        \
    y2 = a2 ^ t3; /* the S-box output is ~y2 */                          \
    y3 = x3 ^ t4;                                                        \
    y4 = a4 ^ t0;                                                        \
    y1 ^= y0;                                                            \
    y0 ^= y4;                                                            \
    y3 ^= y2;                                                            \
    x0 = y0 ^ (hq_rotr64(y0, 19) ^ hq_rotr64(y0, 28));                   \
    x1 = y1 ^ (hq_rotr64(y1, 61) ^ hq_rotr64(y1, 39));                   \
    x2 = (y2 ^ ~(uint64_t)(cn)) ^ (hq_rotr64(y2, 1) ^ hq_rotr64(y2, 6)); \
    x3 = y3 ^ (hq_rotr64(y3, 10) ^ hq_rotr64(y3, 17));                   \
    x4 = y4 ^ (hq_rotr64(y4, 7) ^ hq_rotr64(y4, 41));                    \
  } while (0)

/*
 * The same round with x4 held complemented (lane complementing, as for
 * Keccak's chi): the S-box core is chi on (x0 ^ x4, x1, x2 ^ x1, x3,
 * x4 ^ x3), and with ~x4 in the register three of its five NOT-ANDs
 * become an AND, an OR or an OR-XOR pair. The linear layer keeps a
 * complement (it XORs three rotations of one word), so ~x4 leaves the
 * round as it entered. For CPUs without an AND-NOT instruction (rv64gc).
 */
#define ASCON_ROUND_NX4(cn)                                              \
  do {                                                                   \
    uint64_t a0, a2, a4, n1, y0, y1, y2, y3, y4;                          \
    a0 = x0 ^ x4; /* ~(x0 ^ x4) */                                        \
    a4 = x4 ^ x3; /* ~(x4 ^ x3) */                                        \
    a2 = x2 ^ x1;                                                        \
    n1 = ~x1;                                                            \
    y0 = a0 ^ (n1 & x2);         /* ~y0 */                               \
    y1 = (n1 ^ a2) ^ (a2 | x3);  /* ~y1 */                               \
    y2 = a2 ^ (x3 | a4);         /* ~y2: the S-box output */             \
    y3 = x3 ^ (~a4 | a0);        /* ~y3 */                               \
    y4 = a4 ^ (a0 & x1);         /* ~y4 */                               \
    y1 ^= y0;                                                            \
    y0 ^= y4;                                                            \
    y3 ^= y2;                                                            \
    x0 = y0 ^ (hq_rotr64(y0, 19) ^ hq_rotr64(y0, 28));                   \
    x1 = y1 ^ (hq_rotr64(y1, 61) ^ hq_rotr64(y1, 39));                   \
    x2 = (y2 ^ (uint64_t)(cn)) ^ (hq_rotr64(y2, 1) ^ hq_rotr64(y2, 6));  \
    x3 = y3 ^ (hq_rotr64(y3, 10) ^ hq_rotr64(y3, 17));                   \
    x4 = y4 ^ (hq_rotr64(y4, 7) ^ hq_rotr64(y4, 41));                    \
  } while (0)

/* Round i of p12 has the constant 0xf0 - 0x0f·i (0xf0, 0xe1, …, 0x4b); p8
 * runs the last eight (SP 800-232 Table 5). ASCON_P expects x2 to hold
 * x2 ^ ASCON_C0(rounds) and leaves x2 ^ exit_c (exit_c: the constant of
 * whatever round comes next, 0 for none). */
#define ASCON_C0(rounds) ((rounds) == 12 ? 0xf0 : 0xb4)
#define ASCON_P(rounds, exit_c)                                          \
  do {                                                                   \
    if ((rounds) == 12) {                                                \
      ASCON_R(0xe1);                                                     \
      ASCON_R(0xd2);                                                     \
      ASCON_R(0xc3);                                                     \
      ASCON_R(0xb4);                                                     \
    }                                                                    \
    ASCON_R(0xa5);                                                       \
    ASCON_R(0x96);                                                       \
    ASCON_R(0x87);                                                       \
    ASCON_R(0x78);                                                       \
    ASCON_R(0x69);                                                       \
    ASCON_R(0x5a);                                                       \
    ASCON_R(0x4b);                                                       \
    ASCON_R(exit_c);                                                     \
  } while (0)

/* The includer may define ASCON_COMPLEMENT 1 (ASCON_ROUND_NX4: x4 is
 * complemented on entry to a run of rounds and back on exit) and
 * ASCON_LOAD(p, big_endian), how a block is read. */
#if defined(ASCON_COMPLEMENT) && ASCON_COMPLEMENT
#define ASCON_R(cn) ASCON_ROUND_NX4(cn)
#define ASCON_X4(v) (~(v))
#else
#define ASCON_R(cn) ASCON_ROUND(cn)
#define ASCON_X4(v) (v)
#endif
#ifndef ASCON_LOAD
#define ASCON_LOAD(p, big_endian) ((big_endian) ? hq_load64_be(p) : hq_load64_le(p))
#endif

/*
 * Absorb n 8-byte blocks into x0, each followed by p^rounds. The state
 * stays in registers for the whole run. big_endian selects the Ascon v1.2
 * byte order (SP 800-232 switched to little-endian).
 */
static inline __attribute__((always_inline)) void
ascon_absorb(uint64_t *s, const uint8_t *in, size_t n, int big_endian,
             int rounds) {
  const uint64_t c0 = ASCON_C0(rounds);
  uint64_t x0 = s[0], x1 = s[1], x2 = s[2] ^ c0, x3 = s[3];
  uint64_t x4 = ASCON_X4(s[4]);
  while (n--) {
    x0 ^= ASCON_LOAD(in, big_endian);
    in += 8;
    ASCON_P(rounds, c0);
  }
  x2 ^= c0;
  s[0] = x0, s[1] = x1, s[2] = x2, s[3] = x3, s[4] = ASCON_X4(x4);
}

#endif /* HASHQ_ASCON_PERM_H */

/* The functions of one build: the block loops (hq_algo.blocks) and the
 * bare permutation (rounds = 12 or 8) for initialisation and squeezing. */
#if defined(ASCON_NAME)
ASCON_TARGET void ASCON_NAME(permute)(uint64_t *s, int rounds) {
  uint64_t x0 = s[0], x1 = s[1], x2 = s[2] ^ ASCON_C0(rounds), x3 = s[3],
           x4 = ASCON_X4(s[4]);
  if (rounds == 12) ASCON_P(12, 0);
  else ASCON_P(8, 0);
  s[0] = x0, s[1] = x1, s[2] = x2, s[3] = x3, s[4] = ASCON_X4(x4);
}
ASCON_TARGET void ASCON_NAME(blocks_le12)(hq_ctx *c, const uint8_t *in,
                                           size_t n) {
  ascon_absorb(c->s.w64, in, n, 0, 12);
}
ASCON_TARGET void ASCON_NAME(blocks_be12)(hq_ctx *c, const uint8_t *in,
                                           size_t n) {
  ascon_absorb(c->s.w64, in, n, 1, 12);
}
ASCON_TARGET void ASCON_NAME(blocks_be8)(hq_ctx *c, const uint8_t *in,
                                          size_t n) {
  ascon_absorb(c->s.w64, in, n, 1, 8);
}
#endif
