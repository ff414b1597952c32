/*
 * SHA-384/512 block function for x86-64 CPUs with AVX2 and BMI2: the scalar
 * rounds of sha512_rounds.h (rotations as RORX) fed from a message schedule
 * computed two words at a time in vector registers. The schedule of block
 * i+1 is computed between the round groups of block i, so the vector units
 * work while the integer units run the rounds. Chosen at run time by
 * sha512.c.
 */
#include "sha512_rounds.h"

#if defined(HQ_X86_64)
#include <immintrin.h>

void hq_sha512_blocks_avx2(hq_ctx *c, const uint8_t *in, size_t n);

#define HQ_AVX2 __attribute__((target("avx2,bmi2")))

/* sigma0 = rotr 1 ^ rotr 8 ^ shr 7 (rotr 8 as a byte shuffle), sigma1 =
 * rotr 19 ^ rotr 61 ^ shr 6, on both 64-bit lanes (§4.1.3). */
static inline HQ_AVX2 __m128i ssig0(__m128i x, __m128i rot8) {
  __m128i r1 = _mm_xor_si128(_mm_srli_epi64(x, 1), _mm_slli_epi64(x, 63));
  return _mm_xor_si128(_mm_xor_si128(r1, _mm_shuffle_epi8(x, rot8)),
                       _mm_srli_epi64(x, 7));
}

static inline HQ_AVX2 __m128i ssig1(__m128i x) {
  __m128i r19 = _mm_xor_si128(_mm_srli_epi64(x, 19), _mm_slli_epi64(x, 45));
  __m128i r61 = _mm_xor_si128(_mm_srli_epi64(x, 61), _mm_slli_epi64(x, 3));
  return _mm_xor_si128(_mm_xor_si128(r19, r61), _mm_srli_epi64(x, 6));
}

/* x[j/2] holds the ring words W[t+j], W[t+j+1] for a chunk of 16 words
 * starting at t (a multiple of 16), so register names repeat per chunk. */
#define XR(j) x[((j) / 2) & 7]
#define STORE_WK(t, j)                                                  \
  _mm_store_si128((__m128i *)(wk + (t) + (j)),                          \
                  _mm_add_epi64(XR(j), _mm_loadu_si128((const __m128i *)( \
                                           hq_sha512_k + (t) + (j)))))
/* W[t+j], W[t+j+1] for t+j >= 16 (§6.4.2 step 1); W[t+j+1] needs
 * W[t+j-1], not W[t+j], so both lanes are independent. Ring offsets:
 * W[-16] at j, W[-15] at j+1, W[-7] at j+9, W[-2] at j+14. */
#define EXPAND2(t, j)                                                   \
  do {                                                                  \
    __m128i w15 = _mm_alignr_epi8(XR((j) + 2), XR(j), 8);               \
    __m128i w7 = _mm_alignr_epi8(XR((j) + 10), XR((j) + 8), 8);         \
    XR(j) = _mm_add_epi64(_mm_add_epi64(XR(j), ssig0(w15, rot8)),       \
                          _mm_add_epi64(w7, ssig1(XR((j) + 14))));      \
    STORE_WK(t, j);                                                     \
  } while (0)
#define LOAD2(t, j)                                                     \
  do {                                                                  \
    XR(j) = _mm_shuffle_epi8(                                           \
        _mm_loadu_si128((const __m128i *)(in + 8 * ((t) + (j)))), bswap); \
    STORE_WK(t, j);                                                     \
  } while (0)
#define SCHED8(SCHED2, t, j)                                  \
  do {                                                        \
    SCHED2(t, j);                                             \
    SCHED2(t, (j) + 2);                                       \
    SCHED2(t, (j) + 4);                                       \
    SCHED2(t, (j) + 6);                                       \
  } while (0)
/* K[t] + W[t] of the block being compressed */
#define KW_CUR(t) cur[t]

/* Rounds t..t+15 of the current block, each half followed by a share of
 * the next block's schedule when there is a next block. The loop over
 * chunks stays rolled: the fully unrolled block does not fit the micro-op
 * cache and becomes decode-bound. */
#define CHUNK16(t, SCHED2)                                            \
  do {                                                                \
    SHA512_ROUND8(KW_CUR, t);                                         \
    if (next) SCHED8(SCHED2, t, 0);                                   \
    SHA512_ROUND8(KW_CUR, (t) + 8);                                   \
    if (next) SCHED8(SCHED2, t, 8);                                   \
  } while (0)

HQ_AVX2 void hq_sha512_blocks_avx2(hq_ctx *ctx, const uint8_t *in, size_t n) {
  const __m128i bswap =
      _mm_set_epi64x(0x08090a0b0c0d0e0fULL, 0x0001020304050607ULL);
  const __m128i rot8 =
      _mm_set_epi64x(0x080f0e0d0c0b0a09ULL, 0x0007060504030201ULL);
  _Alignas(16) uint64_t sched[2][80];
  __m128i x[8];
  uint64_t *s = ctx->s.w64;
  if (!n) return;
  {
    uint64_t *wk = sched[0];
    SCHED8(LOAD2, 0, 0);
    SCHED8(LOAD2, 0, 8);
    for (int t = 16; t < 80; t += 16) {
      SCHED8(EXPAND2, t, 0);
      SCHED8(EXPAND2, t, 8);
    }
  }
  for (size_t i = 0; i < n; i++) {
    const uint64_t *cur = sched[i & 1];
    uint64_t *next = i + 1 < n ? sched[(i + 1) & 1] : NULL, *wk = next;
    uint64_t a = s[0], b = s[1], c = s[2], d = s[3];
    uint64_t e = s[4], f = s[5], g = s[6], h = s[7], bc = b ^ c;
    in += 128;
    CHUNK16(0, LOAD2);
#pragma GCC unroll 1
    for (int t = 16; t < 80; t += 16) CHUNK16(t, EXPAND2);
    s[0] += a; s[1] += b; s[2] += c; s[3] += d;
    s[4] += e; s[5] += f; s[6] += g; s[7] += h;
  }
}
#endif
