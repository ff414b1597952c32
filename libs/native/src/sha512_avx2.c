/*
 * SHA-384/512 block functions for x86-64: the scalar rounds of
 * sha512_rounds.h (rotations as RORX) fed from a message schedule computed
 * two words at a time in vector registers, interleaved with the rounds
 * (sha512_vec.h). Two instances, chosen at run time by sha512.c:
 *   avx2      AVX2 + BMI2: sigma0/sigma1 from shifts, ORs and a byte shuffle;
 *   avx512vl  adds AVX-512F/VL: VPRORQ rotations and one VPTERNLOGQ three-way
 *             XOR per sigma, 4 instructions instead of 7 to 9.
 * The rounds are bound by the integer ALUs; the vector schedule beside them
 * is nearly free in the avx512vl instance and costs the avx2 one more (twice
 * the instructions, some spills). Only the avx2 instance unrolls the loop
 * over chunks: it gains from it, the avx512vl one loses. Measurements, and
 * the schedules tried and not kept: README, implementation notes.
 */
#include "sha512_rounds.h"

#if defined(HQ_X86_64)
#include <immintrin.h>

#define HQ_AVX2 __attribute__((target("avx2,bmi2")))
#define HQ_AVX512VL __attribute__((target("avx2,bmi2,avx512f,avx512vl")))

/* sigma0 = rotr 1 ^ rotr 8 ^ shr 7 (rotr 8 as a byte shuffle), sigma1 =
 * rotr 19 ^ rotr 61 ^ shr 6, on both 64-bit lanes (§4.1.3). */
static inline HQ_AVX2 __m128i ssig0_avx2(__m128i x, __m128i rot8) {
  __m128i r1 = _mm_xor_si128(_mm_srli_epi64(x, 1), _mm_slli_epi64(x, 63));
  return _mm_xor_si128(_mm_xor_si128(r1, _mm_shuffle_epi8(x, rot8)),
                       _mm_srli_epi64(x, 7));
}

static inline HQ_AVX2 __m128i ssig1_avx2(__m128i x) {
  __m128i r19 = _mm_xor_si128(_mm_srli_epi64(x, 19), _mm_slli_epi64(x, 45));
  __m128i r61 = _mm_xor_si128(_mm_srli_epi64(x, 61), _mm_slli_epi64(x, 3));
  return _mm_xor_si128(_mm_xor_si128(r19, r61), _mm_srli_epi64(x, 6));
}

#define SHA512_VEC_FN hq_sha512_blocks_avx2
#define SHA512_VEC_TARGET HQ_AVX2
#define SSIG0(x) ssig0_avx2(x, rot8)
#define SSIG1(x) ssig1_avx2(x)
#define SHA512_VEC_CHUNK_LOOP _Pragma("GCC unroll 4")
#define SHA512_VEC_ROUND SHA512_ROUND
#include "sha512_vec.h"
#undef SHA512_VEC_FN
#undef SHA512_VEC_TARGET
#undef SSIG0
#undef SSIG1
#undef SHA512_VEC_CHUNK_LOOP
#undef SHA512_VEC_ROUND

/* 0x96: the truth table of x ^ y ^ z */
static inline HQ_AVX512VL __m128i ssig0_avx512(__m128i x) {
  return _mm_ternarylogic_epi64(_mm_ror_epi64(x, 1), _mm_ror_epi64(x, 8),
                                _mm_srli_epi64(x, 7), 0x96);
}

static inline HQ_AVX512VL __m128i ssig1_avx512(__m128i x) {
  return _mm_ternarylogic_epi64(_mm_ror_epi64(x, 19), _mm_ror_epi64(x, 61),
                                _mm_srli_epi64(x, 6), 0x96);
}

#define SHA512_VEC_FN hq_sha512_blocks_avx512vl
#define SHA512_VEC_TARGET HQ_AVX512VL
#define SSIG0(x) ssig0_avx512(x)
#define SSIG1(x) ssig1_avx512(x)
#define SHA512_VEC_CHUNK_LOOP _Pragma("GCC unroll 1")
#define SHA512_VEC_ROUND SHA512_ROUND_E4
#include "sha512_vec.h"
#undef SHA512_VEC_FN
#undef SHA512_VEC_TARGET
#undef SSIG0
#undef SSIG1
#undef SHA512_VEC_CHUNK_LOOP
#undef SHA512_VEC_ROUND
#endif
