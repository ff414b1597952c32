/*
 * The SHA-384/512 round (FIPS 180-4 §6.4.2 step 3), shared by the block
 * functions of sha512.c and sha512_avx2.c: they differ only in where the
 * round's K[t] + W[t] comes from. The working variables a..h rotate by
 * renaming, so eight rounds need no moves.
 */
#ifndef HASHQ_SHA512_ROUNDS_H
#define HASHQ_SHA512_ROUNDS_H

#include "internal.h"

/* An includer may define SHA512_BSIG0/1 and SHA512_SSIG0/1 (e.g. as single
 * instructions) and SHA512_LOAD(p, aligned) (how sha512_compress reads a
 * message word; `aligned`: the caller promises 8-byte aligned input) before
 * including this header. */
#ifndef SHA512_BSIG0
#define SHA512_BSIG0(x) (hq_rotr64(x, 28) ^ hq_rotr64(x, 34) ^ hq_rotr64(x, 39))
#define SHA512_BSIG1(x) (hq_rotr64(x, 14) ^ hq_rotr64(x, 18) ^ hq_rotr64(x, 41))
#define SHA512_SSIG0(x) (hq_rotr64(x, 1) ^ hq_rotr64(x, 8) ^ ((x) >> 7))
#define SHA512_SSIG1(x) (hq_rotr64(x, 19) ^ hq_rotr64(x, 61) ^ ((x) >> 6))
#endif
#ifndef SHA512_LOAD
#define SHA512_LOAD(p, aligned) hq_load64_be(p)
#endif
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

/* W is a 16-word ring; rounds 16..79 extend it in place (§6.4.2 step 1),
 * 16 at a time, so ring slot j of a chunk is w[j]; k points at K[t]. */
#define SHA512_KW_LOAD(j) (hq_sha512_k[j] + (w[j] = SHA512_LOAD(in + 8 * (j), aligned)))
#define SHA512_KW_EXPAND(j)                                                 \
  (k[j] + (w[j] += SHA512_SSIG1(w[((j) + 14) & 15]) + w[((j) + 9) & 15] +   \
                   SHA512_SSIG0(w[((j) + 1) & 15])))

/* n blocks into the chaining value s: the portable block function and the
 * riscv64 Zbb/Zknh builds (sha2_rv64.h). */
static inline __attribute__((always_inline)) void
sha512_compress(uint64_t *s, const uint8_t *in, size_t n, int aligned) {
  (void)aligned; /* unused by the default SHA*_LOAD */
  for (; n--; in += 128) {
    uint64_t w[16];
    uint64_t a = s[0], b = s[1], c = s[2], d = s[3];
    uint64_t e = s[4], f = s[5], g = s[6], h = s[7], bc = b ^ c;
    SHA512_ROUND8(SHA512_KW_LOAD, 0);
    SHA512_ROUND8(SHA512_KW_LOAD, 8);
    /* rolled by 16 rounds: fully unrolled ran slower on x86-64 */
#pragma GCC unroll 1
    for (const uint64_t *k = hq_sha512_k + 16; k < hq_sha512_k + 80; k += 16) {
      SHA512_ROUND8(SHA512_KW_EXPAND, 0);
      SHA512_ROUND8(SHA512_KW_EXPAND, 8);
    }
    s[0] += a; s[1] += b; s[2] += c; s[3] += d;
    s[4] += e; s[5] += f; s[6] += g; s[7] += h;
  }
}

#endif
