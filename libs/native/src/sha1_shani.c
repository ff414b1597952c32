/*
 * SHA-1 block function on the x86 SHA extensions (SHA1RNDS4, SHA1NEXTE,
 * SHA1MSG1, SHA1MSG2). Chosen at run time by sha1.c; compiled with a
 * per-function target so the rest of the binary stays baseline x86-64.
 *
 * The instructions keep A..D in one register (A in the top lane) and E in
 * the top lane of another; SHA1NEXTE derives the next E (rotl 30 of the A
 * of four rounds earlier) and adds the message words to it.
 *
 * The block is a chain of twenty dependent SHA1RNDS4; the message schedule
 * runs beside it on the same execution unit. GCC's post-register-allocation
 * scheduler moves schedule instructions where they delay the chain, so the
 * one-message function keeps this source's order (no-schedule-insns2); the
 * two-message one, whose two chains hide each other's delays, gains from the
 * scheduler and keeps it (measurements: README, implementation notes).
 */
#include "internal.h"

#if defined(HQ_X86_64)
#include <immintrin.h>

#include "shani_common.h"

#define HQ_SHANI __attribute__((target("sha,sse4.1,ssse3")))
#if defined(__GNUC__) && !defined(__clang__)
#define HQ_SOURCE_ORDER __attribute__((optimize("no-schedule-insns2")))
#else
#define HQ_SOURCE_ORDER
#endif

/* Rounds 4q..4q+3 of lane x with message words in mq; the first quad adds
 * E directly, later ones through SHA1NEXTE on the A..D of the quad before. */
#define QROUND0(x, m)                                                   \
  do {                                                                  \
    prev##x = abcd##x;                                                  \
    abcd##x = _mm_sha1rnds4_epu32(abcd##x, _mm_add_epi32(e##x, m), 0);  \
  } while (0)
#define QROUND(x, q, m)                                 \
  do {                                                  \
    __m128i ek = _mm_sha1nexte_epu32(prev##x, m);       \
    prev##x = abcd##x;                                  \
    abcd##x = _mm_sha1rnds4_epu32(abcd##x, ek, (q) / 5); \
  } while (0)
/* W[4q..4q+3] from the four previous quads (§6.1.2 step 1): MSG1 xors in
 * W[t-14], the xor adds W[t-8], MSG2 adds W[t-3] and rotates. */
#define EXPAND(m4, m3, m2, m1) \
  (m4 = _mm_sha1msg2_epu32(_mm_xor_si128(_mm_sha1msg1_epu32(m4, m3), m2), m1))
#define QROUND_X(x, q, a, b, c, d)                 \
  do {                                             \
    EXPAND(m##a##x, m##b##x, m##c##x, m##d##x);    \
    QROUND(x, q, m##a##x);                         \
  } while (0)

/* Quads 4..19 of a block, EACH(q, a, b, c, d) each (quads 0..3 take the
 * loaded words as they are). */
#define QUADS_4_TO_19(EACH)                                             \
  SHANI_RING4(EACH, 4); SHANI_RING4(EACH, 8); SHANI_RING4(EACH, 12);    \
  SHANI_RING4(EACH, 16)

#define BSWAP_MASK _mm_set_epi64x(0x0001020304050607ULL, 0x08090a0b0c0d0e0fULL)
#define LOAD_STATE(x, s)                                                    \
  __m128i abcd##x =                                                         \
      _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(s)), 0x1b);       \
  __m128i e##x = _mm_set_epi32((int)(s)[4], 0, 0, 0)
#define STORE_STATE(x, s)                                                   \
  do {                                                                      \
    _mm_storeu_si128((__m128i *)(s), _mm_shuffle_epi32(abcd##x, 0x1b));     \
    (s)[4] = (uint32_t)_mm_extract_epi32(e##x, 3);                          \
  } while (0)

HQ_SHANI HQ_SOURCE_ORDER void hq_sha1_blocks_shani(hq_ctx *c, const uint8_t *in,
                                               size_t n) {
  const __m128i bswap = BSWAP_MASK;
  LOAD_STATE(_, c->s.w32);
  for (; n--; in += 64) {
    __m128i abcd0_ = abcd_, prev_;
    SHANI_LOAD_BLOCK(_, in);
    QROUND0(_, m0_);
    QROUND(_, 1, m1_);
    QROUND(_, 2, m2_);
    QROUND(_, 3, m3_);
#define ONE(q, a, b, cc, d) QROUND_X(_, q, a, b, cc, d)
    QUADS_4_TO_19(ONE);
#undef ONE
    e_ = _mm_sha1nexte_epu32(prev_, e_);
    abcd_ = _mm_add_epi32(abcd_, abcd0_);
  }
  STORE_STATE(_, c->s.w32);
}

/* Two independent messages, n blocks of each, interleaved quad by quad: one
 * message is bound by the latency of SHA1RNDS4 (on OpenSSL too), and the
 * second lane uses the issue slots the first leaves idle. */
HQ_SHANI void hq_sha1_blocks2_shani(hq_ctx *a, const uint8_t *ina, hq_ctx *b,
                                    const uint8_t *inb, size_t n) {
  const __m128i bswap = BSWAP_MASK;
  LOAD_STATE(A, a->s.w32);
  LOAD_STATE(B, b->s.w32);
  for (; n--; ina += 64, inb += 64) {
    __m128i abcd0A = abcdA, abcd0B = abcdB, prevA, prevB;
    SHANI_LOAD_BLOCK(A, ina);
    SHANI_LOAD_BLOCK(B, inb);
    QROUND0(A, m0A);
    QROUND0(B, m0B);
    QROUND(A, 1, m1A);
    QROUND(B, 1, m1B);
    QROUND(A, 2, m2A);
    QROUND(B, 2, m2B);
    QROUND(A, 3, m3A);
    QROUND(B, 3, m3B);
#define TWO(q, a_, b_, c_, d_)     \
  QROUND_X(A, q, a_, b_, c_, d_);  \
  QROUND_X(B, q, a_, b_, c_, d_)
    QUADS_4_TO_19(TWO);
#undef TWO
    eA = _mm_sha1nexte_epu32(prevA, eA);
    abcdA = _mm_add_epi32(abcdA, abcd0A);
    eB = _mm_sha1nexte_epu32(prevB, eB);
    abcdB = _mm_add_epi32(abcdB, abcd0B);
  }
  STORE_STATE(A, a->s.w32);
  STORE_STATE(B, b->s.w32);
}
#endif
