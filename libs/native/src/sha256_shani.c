/*
 * SHA-256 block function on the x86 SHA extensions (Intel SHA-NI: SHA256RNDS2,
 * SHA256MSG1, SHA256MSG2). Chosen at run time by sha256.c; compiled with a
 * per-function target so the rest of the binary stays baseline x86-64.
 *
 * SHA256RNDS2 works on the state split as {A,B,E,F} and {C,D,G,H} (A and C
 * in the top lanes); the state is converted from/to H0..H7 once per call.
 */
#include "internal.h"

#if defined(HQ_X86_64)
#include <immintrin.h>

void hq_sha256_blocks_shani(hq_ctx *c, const uint8_t *in, size_t n);
extern const uint32_t hq_sha256_k[64];

#define HQ_SHANI __attribute__((target("sha,sse4.1,ssse3")))

/* Four rounds on message words W[4i..4i+3] held in mi; for i < 12 the ring
 * slot mi is then refilled with W[4i+16..4i+19] (FIPS 180-4 §6.2.2 step 1):
 * MSG1 adds sigma0, the alignr supplies W[t-7], MSG2 adds sigma1. */
#define QROUND(i, mi, mi1, mi2, mi3)                                        \
  do {                                                                      \
    __m128i wk = _mm_add_epi32(                                             \
        mi, _mm_loadu_si128((const __m128i *)(hq_sha256_k + 4 * (i))));     \
    cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);                           \
    abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(wk, 0x0e));  \
    if ((i) < 12)                                                           \
      mi = _mm_sha256msg2_epu32(                                            \
          _mm_add_epi32(_mm_sha256msg1_epu32(mi, mi1),                      \
                        _mm_alignr_epi8(mi3, mi2, 4)),                      \
          mi3);                                                             \
  } while (0)

HQ_SHANI void hq_sha256_blocks_shani(hq_ctx *c, const uint8_t *in, size_t n) {
  const __m128i bswap =
      _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  uint32_t *s = c->s.w32;
  __m128i dcba = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)s), 0xb1);
  __m128i hgfe =
      _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(s + 4)), 0x1b);
  __m128i abef = _mm_alignr_epi8(dcba, hgfe, 8);     /* f e b a */
  __m128i cdgh = _mm_blend_epi16(hgfe, dcba, 0xf0);  /* h g d c */

  for (; n--; in += 64) {
    __m128i abef0 = abef, cdgh0 = cdgh;
    __m128i m0 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)in), bswap);
    __m128i m1 =
        _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(in + 16)), bswap);
    __m128i m2 =
        _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(in + 32)), bswap);
    __m128i m3 =
        _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(in + 48)), bswap);
    QROUND(0, m0, m1, m2, m3);
    QROUND(1, m1, m2, m3, m0);
    QROUND(2, m2, m3, m0, m1);
    QROUND(3, m3, m0, m1, m2);
    QROUND(4, m0, m1, m2, m3);
    QROUND(5, m1, m2, m3, m0);
    QROUND(6, m2, m3, m0, m1);
    QROUND(7, m3, m0, m1, m2);
    QROUND(8, m0, m1, m2, m3);
    QROUND(9, m1, m2, m3, m0);
    QROUND(10, m2, m3, m0, m1);
    QROUND(11, m3, m0, m1, m2);
    QROUND(12, m0, m1, m2, m3);
    QROUND(13, m1, m2, m3, m0);
    QROUND(14, m2, m3, m0, m1);
    QROUND(15, m3, m0, m1, m2);
    abef = _mm_add_epi32(abef, abef0);
    cdgh = _mm_add_epi32(cdgh, cdgh0);
  }

  __m128i feba = _mm_shuffle_epi32(abef, 0x1b);  /* a b e f, low first */
  __m128i dchg = _mm_shuffle_epi32(cdgh, 0xb1);  /* g h c d */
  _mm_storeu_si128((__m128i *)s, _mm_blend_epi16(feba, dchg, 0xf0));
  _mm_storeu_si128((__m128i *)(s + 4), _mm_alignr_epi8(dchg, feba, 8));
}
#endif
