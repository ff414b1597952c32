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

#include "shani_common.h"

#define HQ_SHANI __attribute__((target("sha,sse4.1,ssse3")))

/* Four rounds of one lane (state abef/cdgh) on message words W[4i..4i+3]
 * held in mi; for i < 12 the ring slot mi is then refilled with
 * W[4i+16..4i+19] (FIPS 180-4 §6.2.2 step 1): MSG1 adds sigma0, the alignr
 * supplies W[t-7], MSG2 adds sigma1. */
#define QROUND(i, abef, cdgh, mi, mi1, mi2, mi3)                            \
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

/* The 64 rounds of one block: EACH(i, a, b, c, d) per group of four
 * rounds; lane x uses abef##x, cdgh##x and m0##x..m3##x. */
#define LANE(x, i, a, b, c, d) \
  QROUND(i, abef##x, cdgh##x, m##a##x, m##b##x, m##c##x, m##d##x)
#define ALL_ROUNDS(EACH)                                                    \
  SHANI_RING4(EACH, 0); SHANI_RING4(EACH, 4); SHANI_RING4(EACH, 8);         \
  SHANI_RING4(EACH, 12)

#define BSWAP_MASK _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL)

/* H0..H7 to/from the {A,B,E,F} / {C,D,G,H} split. */
static inline HQ_SHANI void load_state(const uint32_t *s, __m128i *abef,
                                       __m128i *cdgh) {
  __m128i dcba = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)s), 0xb1);
  __m128i hgfe =
      _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(s + 4)), 0x1b);
  *abef = _mm_alignr_epi8(dcba, hgfe, 8);    /* f e b a */
  *cdgh = _mm_blend_epi16(hgfe, dcba, 0xf0); /* h g d c */
}

static inline HQ_SHANI void store_state(uint32_t *s, __m128i abef,
                                        __m128i cdgh) {
  __m128i feba = _mm_shuffle_epi32(abef, 0x1b); /* a b e f, low first */
  __m128i dchg = _mm_shuffle_epi32(cdgh, 0xb1); /* g h c d */
  _mm_storeu_si128((__m128i *)s, _mm_blend_epi16(feba, dchg, 0xf0));
  _mm_storeu_si128((__m128i *)(s + 4), _mm_alignr_epi8(dchg, feba, 8));
}

HQ_SHANI void hq_sha256_blocks_shani(hq_ctx *c, const uint8_t *in, size_t n) {
  const __m128i bswap = BSWAP_MASK;
  __m128i abef_, cdgh_;
  load_state(c->s.w32, &abef_, &cdgh_);
  for (; n--; in += 64) {
    __m128i abef0 = abef_, cdgh0 = cdgh_;
    SHANI_LOAD_BLOCK(_, in);
#define ONE(i, a, b, cc, d) LANE(_, i, a, b, cc, d)
    ALL_ROUNDS(ONE);
#undef ONE
    abef_ = _mm_add_epi32(abef_, abef0);
    cdgh_ = _mm_add_epi32(cdgh_, cdgh0);
  }
  store_state(c->s.w32, abef_, cdgh_);
}

/* Two independent messages, n blocks of each, interleaved round by round.
 * SHA256RNDS2 has a latency of several cycles but issues more often, so a
 * single message leaves the SHA unit idle most of the time (one message is
 * latency-bound: the same on OpenSSL); the second lane fills those slots
 * (≈ 1.5x the blocks per second of one lane here; bench/c sha_speed). */
HQ_SHANI void hq_sha256_blocks2_shani(hq_ctx *a, const uint8_t *ina,
                                      hq_ctx *b, const uint8_t *inb,
                                      size_t n) {
  const __m128i bswap = BSWAP_MASK;
  __m128i abefA, cdghA, abefB, cdghB;
  load_state(a->s.w32, &abefA, &cdghA);
  load_state(b->s.w32, &abefB, &cdghB);
  for (; n--; ina += 64, inb += 64) {
    __m128i abef0A = abefA, cdgh0A = cdghA, abef0B = abefB, cdgh0B = cdghB;
    SHANI_LOAD_BLOCK(A, ina);
    SHANI_LOAD_BLOCK(B, inb);
#define TWO(i, a_, b_, c_, d_)   \
  LANE(A, i, a_, b_, c_, d_);    \
  LANE(B, i, a_, b_, c_, d_)
    ALL_ROUNDS(TWO);
#undef TWO
    abefA = _mm_add_epi32(abefA, abef0A);
    cdghA = _mm_add_epi32(cdghA, cdgh0A);
    abefB = _mm_add_epi32(abefB, abef0B);
    cdghB = _mm_add_epi32(cdghB, cdgh0B);
  }
  store_state(a->s.w32, abefA, cdghA);
  store_state(b->s.w32, abefB, cdghB);
}
#endif
