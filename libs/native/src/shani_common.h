/*
 * Pieces shared by the SHA-1 and SHA-256 block functions on the x86 SHA
 * extensions (sha1_shani.c, sha256_shani.c), for one message or two
 * interleaved: lane x names its registers with the suffix x.
 */
#ifndef HASHQ_SHANI_COMMON_H
#define HASHQ_SHANI_COMMON_H

/* The block's 16 message words into m0x..m3x, four per register, byte
 * order fixed by the shuffle mask `bswap` of the including function. */
#define SHANI_LOAD_BLOCK(x, p)                                               \
  __m128i m0##x = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p)), bswap);        \
  __m128i m1##x = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)((p) + 16)), bswap); \
  __m128i m2##x = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)((p) + 32)), bswap); \
  __m128i m3##x = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)((p) + 48)), bswap)

/* Four steps q..q+3 over the ring of four message registers: step q uses
 * EACH(q, a, b, c, d) with m_a the slot it consumes (and refills) and
 * m_b, m_c, m_d the ones after it. */
#define SHANI_RING4(EACH, q)                                                 \
  EACH((q), 0, 1, 2, 3); EACH((q) + 1, 1, 2, 3, 0);                          \
  EACH((q) + 2, 2, 3, 0, 1); EACH((q) + 3, 3, 0, 1, 2)

#endif /* HASHQ_SHANI_COMMON_H */
