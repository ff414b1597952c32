/*
 * The SHA-384/512 round (FIPS 180-4 §6.4.2 step 3), shared by the block
 * functions of sha512.c and sha512_avx2.c: they differ only in where the
 * round's K[t] + W[t] comes from. The working variables a..h rotate by
 * renaming, so eight rounds need no moves.
 */
#ifndef HASHQ_SHA512_ROUNDS_H
#define HASHQ_SHA512_ROUNDS_H

#include "internal.h"

#define SHA512_BSIG0(x) (hq_rotr64(x, 28) ^ hq_rotr64(x, 34) ^ hq_rotr64(x, 39))
#define SHA512_BSIG1(x) (hq_rotr64(x, 14) ^ hq_rotr64(x, 18) ^ hq_rotr64(x, 41))
#define SHA512_CH(x, y, z) ((z) ^ ((x) & ((y) ^ (z))))

/* Maj(a, b, c) = b ^ ((a ^ b) & (b ^ c)), and this round's b ^ c is the
 * previous round's a ^ b: the caller keeps it in `bc` (set bc = b ^ c
 * before the first round), which saves an operation per round. */
#define SHA512_ROUND(a, b, c, d, e, f, g, h, kw)                         \
  do {                                                                   \
    uint64_t t1 = h + SHA512_BSIG1(e) + SHA512_CH(e, f, g) + (kw);       \
    uint64_t ab = a ^ b;                                                 \
    d += t1;                                                             \
    h = t1 + SHA512_BSIG0(a) + (b ^ (ab & bc));                          \
    bc = ab;                                                             \
  } while (0)

/*
 * The same round with the additions reassociated so that the new e takes
 * four dependent steps after e instead of five: e' = ((d + h + kw) + Ch) +
 * Sigma1(e), and T1 = (h + kw + Ch) + Sigma1(e) beside it (one more add).
 * Faster where the rounds wait on that chain rather than on the integer
 * ALUs (the AVX-512VL block function); slower for the portable and AVX2
 * ones, whose rounds compete with more scalar work, so only that one uses it
 * (measurements: README, implementation notes).
 */
#define SHA512_ROUND_E4(a, b, c, d, e, f, g, h, kw)                      \
  do {                                                                   \
    uint64_t hk = h + (kw);                                              \
    uint64_t dhk = d + hk;                                               \
    uint64_t ch = SHA512_CH(e, f, g);                                    \
    uint64_t t1 = hk + ch;                                               \
    dhk += ch;                                                           \
    uint64_t s1 = SHA512_BSIG1(e);                                       \
    d = dhk + s1;                                                        \
    t1 += s1;                                                            \
    uint64_t ab = a ^ b;                                                 \
    h = t1 + SHA512_BSIG0(a) + (b ^ (ab & bc));                          \
    bc = ab;                                                             \
  } while (0)

/* Rounds t..t+7 on variables named a..h and bc; KW(t) yields K[t] + W[t]. */
#define SHA512_ROUND8(KW, t)                                   \
  SHA512_ROUND(a, b, c, d, e, f, g, h, KW((t) + 0));           \
  SHA512_ROUND(h, a, b, c, d, e, f, g, KW((t) + 1));           \
  SHA512_ROUND(g, h, a, b, c, d, e, f, KW((t) + 2));           \
  SHA512_ROUND(f, g, h, a, b, c, d, e, KW((t) + 3));           \
  SHA512_ROUND(e, f, g, h, a, b, c, d, KW((t) + 4));           \
  SHA512_ROUND(d, e, f, g, h, a, b, c, KW((t) + 5));           \
  SHA512_ROUND(c, d, e, f, g, h, a, b, KW((t) + 6));           \
  SHA512_ROUND(b, c, d, e, f, g, h, a, KW((t) + 7))

#endif
