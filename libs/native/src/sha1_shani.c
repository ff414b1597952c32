/*
 * SHA-1 block function on the x86 SHA extensions (SHA1RNDS4, SHA1NEXTE,
 * SHA1MSG1, SHA1MSG2). Chosen at run time by sha1.c; compiled with a
 * per-function target so the rest of the binary stays baseline x86-64.
 *
 * The instructions keep A..D in one register (A in the top lane) and E in
 * the top lane of another; SHA1NEXTE derives the next E (rotl 30 of the A
 * of four rounds earlier) and adds the message words to it.
 */
#include "internal.h"

#if defined(HQ_X86_64)
#include <immintrin.h>

void hq_sha1_blocks_shani(hq_ctx *c, const uint8_t *in, size_t n);

#define HQ_SHANI __attribute__((target("sha,sse4.1,ssse3")))

/* Rounds 4q..4q+3 with message words in mq; the first quad adds E
 * directly, later ones through SHA1NEXTE on the A..D of the quad before. */
#define QROUND0(m)                                      \
  do {                                                  \
    prev = abcd;                                        \
    abcd = _mm_sha1rnds4_epu32(abcd, _mm_add_epi32(e, m), 0); \
  } while (0)
#define QROUND(q, m)                                    \
  do {                                                  \
    __m128i ek = _mm_sha1nexte_epu32(prev, m);          \
    prev = abcd;                                        \
    abcd = _mm_sha1rnds4_epu32(abcd, ek, (q) / 5);      \
  } while (0)
/* W[4q..4q+3] from the four previous quads (§6.1.2 step 1): MSG1 xors in
 * W[t-14], the xor adds W[t-8], MSG2 adds W[t-3] and rotates. */
#define EXPAND(m4, m3, m2, m1) \
  (m4 = _mm_sha1msg2_epu32(_mm_xor_si128(_mm_sha1msg1_epu32(m4, m3), m2), m1))
#define QROUND_X(q, m4, m3, m2, m1) \
  do {                              \
    EXPAND(m4, m3, m2, m1);         \
    QROUND(q, m4);                  \
  } while (0)

HQ_SHANI void hq_sha1_blocks_shani(hq_ctx *c, const uint8_t *in, size_t n) {
  const __m128i bswap =
      _mm_set_epi64x(0x0001020304050607ULL, 0x08090a0b0c0d0e0fULL);
  uint32_t *s = c->s.w32;
  __m128i abcd = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)s), 0x1b);
  __m128i e = _mm_set_epi32((int)s[4], 0, 0, 0);

  for (; n--; in += 64) {
    __m128i abcd0 = abcd, prev;
    __m128i m0 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)in), bswap);
    __m128i m1 =
        _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(in + 16)), bswap);
    __m128i m2 =
        _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(in + 32)), bswap);
    __m128i m3 =
        _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(in + 48)), bswap);
    QROUND0(m0);
    QROUND(1, m1);
    QROUND(2, m2);
    QROUND(3, m3);
    QROUND_X(4, m0, m1, m2, m3);
    QROUND_X(5, m1, m2, m3, m0);
    QROUND_X(6, m2, m3, m0, m1);
    QROUND_X(7, m3, m0, m1, m2);
    QROUND_X(8, m0, m1, m2, m3);
    QROUND_X(9, m1, m2, m3, m0);
    QROUND_X(10, m2, m3, m0, m1);
    QROUND_X(11, m3, m0, m1, m2);
    QROUND_X(12, m0, m1, m2, m3);
    QROUND_X(13, m1, m2, m3, m0);
    QROUND_X(14, m2, m3, m0, m1);
    QROUND_X(15, m3, m0, m1, m2);
    QROUND_X(16, m0, m1, m2, m3);
    QROUND_X(17, m1, m2, m3, m0);
    QROUND_X(18, m2, m3, m0, m1);
    QROUND_X(19, m3, m0, m1, m2);
    e = _mm_sha1nexte_epu32(prev, e);
    abcd = _mm_add_epi32(abcd, abcd0);
  }

  _mm_storeu_si128((__m128i *)s, _mm_shuffle_epi32(abcd, 0x1b));
  s[4] = (uint32_t)_mm_extract_epi32(e, 3);
}
#endif
