/*
 * The SHA-224/256 compression (FIPS 180-4 §6.2.2), shared by the portable
 * block function of sha256.c and the riscv64 Zbb and Zknh builds
 * (sha2_rv64.h). An includer may define, before including this header,
 * SHA256_BSIG0/1 and SHA256_SSIG0/1 (the Sigma/sigma functions, e.g. as
 * single instructions) and SHA256_LOAD(p, aligned) (how a message word is
 * read; `aligned`: the caller promises 8-byte aligned input).
 */
#ifndef HASHQ_SHA256_ROUNDS_H
#define HASHQ_SHA256_ROUNDS_H

#include "internal.h"


#ifndef SHA256_BSIG0
#define SHA256_BSIG0(x) (hq_rotr32(x, 2) ^ hq_rotr32(x, 13) ^ hq_rotr32(x, 22))
#define SHA256_BSIG1(x) (hq_rotr32(x, 6) ^ hq_rotr32(x, 11) ^ hq_rotr32(x, 25))
#define SHA256_SSIG0(x) (hq_rotr32(x, 7) ^ hq_rotr32(x, 18) ^ ((x) >> 3))
#define SHA256_SSIG1(x) (hq_rotr32(x, 17) ^ hq_rotr32(x, 19) ^ ((x) >> 10))
#endif
#ifndef SHA256_LOAD
#define SHA256_LOAD(p, aligned) hq_load32_be(p)
#endif
#define SHA256_CH(x, y, z) ((z) ^ ((x) & ((y) ^ (z))))

/* One round; kw is K[t] + W[t]. The eight working variables rotate by
 * renaming, so no moves between rounds. Maj(a, b, c) = b ^ ((a ^ b) &
 * (b ^ c)), and this round's b ^ c is the last round's a ^ b, kept in bc. */
#define SHA256_ROUND(a, b, c, d, e, f, g, h, kw)                     \
  do {                                                               \
    uint32_t t1 = h + SHA256_BSIG1(e) + SHA256_CH(e, f, g) + (kw);   \
    uint32_t ab = a ^ b;                                             \
    d += t1;                                                         \
    h = t1 + SHA256_BSIG0(a) + (b ^ (ab & bc));                      \
    bc = ab;                                                         \
  } while (0)
#define SHA256_ROUND8(KW, j)                                \
  SHA256_ROUND(a, b, c, d, e, f, g, h, KW((j) + 0));        \
  SHA256_ROUND(h, a, b, c, d, e, f, g, KW((j) + 1));        \
  SHA256_ROUND(g, h, a, b, c, d, e, f, KW((j) + 2));        \
  SHA256_ROUND(f, g, h, a, b, c, d, e, KW((j) + 3));        \
  SHA256_ROUND(e, f, g, h, a, b, c, d, KW((j) + 4));        \
  SHA256_ROUND(d, e, f, g, h, a, b, c, KW((j) + 5));        \
  SHA256_ROUND(c, d, e, f, g, h, a, b, KW((j) + 6));        \
  SHA256_ROUND(b, c, d, e, f, g, h, a, KW((j) + 7))
/* W is a 16-word ring; rounds 16..63 extend it in place (§6.2.2 step 1),
 * 16 at a time, so ring slot j of a chunk is w[j]; k points at K[t]. */
#define SHA256_KW_LOAD(j) (hq_sha256_k[j] + (w[j] = SHA256_LOAD(in + 4 * (j), aligned)))
#define SHA256_KW_EXPAND(j)                                               \
  (k[j] + (w[j] += SHA256_SSIG1(w[((j) + 14) & 15]) + w[((j) + 9) & 15] + \
                   SHA256_SSIG0(w[((j) + 1) & 15])))

static inline __attribute__((always_inline)) void
sha256_compress(uint32_t *s, const uint8_t *in, size_t n, int aligned) {
  (void)aligned; /* unused by the default SHA*_LOAD */
  for (; n--; in += 64) {
    uint32_t w[16];
    uint32_t a = s[0], b = s[1], c = s[2], d = s[3];
    uint32_t e = s[4], f = s[5], g = s[6], h = s[7], bc = b ^ c;
    SHA256_ROUND8(SHA256_KW_LOAD, 0);
    SHA256_ROUND8(SHA256_KW_LOAD, 8);
    /* rolled by 16 rounds: fully unrolled ran slower on x86-64 */
#pragma GCC unroll 1
    for (const uint32_t *k = hq_sha256_k + 16; k < hq_sha256_k + 64; k += 16) {
      SHA256_ROUND8(SHA256_KW_EXPAND, 0);
      SHA256_ROUND8(SHA256_KW_EXPAND, 8);
    }
    s[0] += a; s[1] += b; s[2] += c; s[3] += d;
    s[4] += e; s[5] += f; s[6] += g; s[7] += h;
  }
}

#endif
