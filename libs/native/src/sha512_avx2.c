/*
 * SHA-384/512 block function for x86-64 CPUs with AVX2 and BMI2: the scalar
 * rounds of sha512_rounds.h (rotations as RORX) fed from a message schedule
 * computed two words at a time in vector registers. The schedule of block
 * i+1 is computed in small steps between the rounds of block i, so the
 * vector units work while the integer units run the rounds (measured on
 * this AMD EPYC: interleaving one step per two rounds made the schedule
 * nearly free; one batch per eight rounds cost 10 %). Chosen at run time by
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
/* the 16 words t..t+15 in one go (the first block's schedule) */
#define UNIT16(SCHED2, t)                                               \
  do {                                                                  \
    SCHED2(t, 0); SCHED2(t, 2); SCHED2(t, 4); SCHED2(t, 6);             \
    SCHED2(t, 8); SCHED2(t, 10); SCHED2(t, 12); SCHED2(t, 14);          \
  } while (0)

#define R(t, a, b, c, d, e, f, g, h, k) \
  SHA512_ROUND(a, b, c, d, e, f, g, h, cur[(t) + (k)])

/* Rounds t..t+15 of the current block, with one step (two words) of the
 * next block's schedule after every second round. The loop over chunks
 * stays rolled: fully unrolled, the block function ran slower here. */
#define CHUNK16(t, SCHED2)                 \
  do {                                     \
    R(t, a, b, c, d, e, f, g, h, 0);       \
    R(t, h, a, b, c, d, e, f, g, 1);       \
    SCHED2(t, 0);                          \
    R(t, g, h, a, b, c, d, e, f, 2);       \
    R(t, f, g, h, a, b, c, d, e, 3);       \
    SCHED2(t, 2);                          \
    R(t, e, f, g, h, a, b, c, d, 4);       \
    R(t, d, e, f, g, h, a, b, c, 5);       \
    SCHED2(t, 4);                          \
    R(t, c, d, e, f, g, h, a, b, 6);       \
    R(t, b, c, d, e, f, g, h, a, 7);       \
    SCHED2(t, 6);                          \
    R(t, a, b, c, d, e, f, g, h, 8);       \
    R(t, h, a, b, c, d, e, f, g, 9);       \
    SCHED2(t, 8);                          \
    R(t, g, h, a, b, c, d, e, f, 10);      \
    R(t, f, g, h, a, b, c, d, e, 11);      \
    SCHED2(t, 10);                         \
    R(t, e, f, g, h, a, b, c, d, 12);      \
    R(t, d, e, f, g, h, a, b, c, 13);      \
    SCHED2(t, 12);                         \
    R(t, c, d, e, f, g, h, a, b, 14);      \
    R(t, b, c, d, e, f, g, h, a, 15);      \
    SCHED2(t, 14);                         \
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
    UNIT16(LOAD2, 0);
    for (int t = 16; t < 80; t += 16) UNIT16(EXPAND2, t);
  }
  for (size_t i = 0; i < n; i++) {
    const uint64_t *cur = sched[i & 1];
    /* the last block schedules itself again (a harmless read) so that the
     * hot loop has no branch */
    uint64_t *wk = sched[(i + 1) & 1];
    uint64_t a = s[0], b = s[1], c = s[2], d = s[3];
    uint64_t e = s[4], f = s[5], g = s[6], h = s[7], bc = b ^ c;
    if (i + 1 < n) in += 128;
    CHUNK16(0, LOAD2);
#pragma GCC unroll 1
    for (int t = 16; t < 80; t += 16) CHUNK16(t, EXPAND2);
    s[0] += a; s[1] += b; s[2] += c; s[3] += d;
    s[4] += e; s[5] += f; s[6] += g; s[7] += h;
  }
}
#endif
