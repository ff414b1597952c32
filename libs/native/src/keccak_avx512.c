/*
 * Keccak-f[1600] block loops for x86-64 CPUs with AVX-512F and AVX-512VL,
 * picked by keccak.c at load time (cpuid, and the OS saving the AVX-512
 * registers).
 *
 * Each of the 25 lanes lives in the low half of its own XMM register (VL
 * gives 32 of them), so no lane ever moves between registers: there are no
 * shuffles. What AVX-512 adds over the scalar code is that vpternlogq does
 * any function of three inputs in one instruction (chi's a ^ (~b & c), the
 * five-way XORs of theta in two) and vprolq rotates in place. A round is
 * then about 95 vector instructions against about 130 scalar ones, and the
 * vector units of current CPUs run as many per cycle as the integer ones.
 *
 * Lanes are numbered, loaded and stored as in keccak_perm.h (lane
 * i = x + 5y, host order), so the state is the same bytes in every build.
 */
#include "internal.h"
#include "keccak_common.h"

#if defined(HQ_X86_64)
#include <immintrin.h>

#define KECCAK_AVX512 __attribute__((target("avx512f,avx512vl")))

/* vpternlogq truth tables: 0x96 = a ^ b ^ c, 0xD2 = a ^ (~b & c). */
#define XOR3(a, b, c) _mm_ternarylogic_epi64((a), (b), (c), 0x96)
#define CHI(a, b, c) _mm_ternarylogic_epi64((a), (b), (c), 0xD2)
/* A column parity in three instructions that keep their inputs (vpternlogq
 * overwrites its first operand: XOR3(XOR3(..)) would need a lane copy). */
#define COL(a0, a1, a2, a3, a4) \
  _mm_xor_si128(XOR3(_mm_xor_si128(a0, a1), a2, a3), a4)
#define ROL(x, n) ((n) ? _mm_rol_epi64((x), (n)) : (x))

/* One row of rho, pi and chi: output row y of E from the source lanes
 * s0..s4 (columns x0..x4, rotations r0..r4) of A. */
#define ROW(A, E, y, s0, x0, r0, s1, x1, r1, s2, x2, r2, s3, x3, r3, s4,  \
            x4, r4)                                                       \
  do {                                                                    \
    __m128i b0 = ROL(_mm_xor_si128(A##s0, d##x0), r0);                    \
    __m128i b1 = ROL(_mm_xor_si128(A##s1, d##x1), r1);                    \
    __m128i b2 = ROL(_mm_xor_si128(A##s2, d##x2), r2);                    \
    __m128i b3 = ROL(_mm_xor_si128(A##s3, d##x3), r3);                    \
    __m128i b4 = ROL(_mm_xor_si128(A##s4, d##x4), r4);                    \
    E##0##y = CHI(b0, b1, b2);                                            \
    E##1##y = CHI(b1, b2, b3);                                            \
    E##2##y = CHI(b2, b3, b4);                                            \
    E##3##y = CHI(b3, b4, b0);                                            \
    E##4##y = CHI(b4, b0, b1);                                            \
  } while (0)

/* One round A → E: theta, then rho/pi/chi row by row, then iota. Pi sends
 * lane (x,y) to (y, 2x+3y); the rotation offsets are those of FIPS 202
 * Table 2. */
#define ROUND(A, E, rc)                                                   \
  do {                                                                    \
    __m128i c0 = COL(A##00, A##01, A##02, A##03, A##04);                  \
    __m128i c1 = COL(A##10, A##11, A##12, A##13, A##14);                  \
    __m128i c2 = COL(A##20, A##21, A##22, A##23, A##24);                  \
    __m128i c3 = COL(A##30, A##31, A##32, A##33, A##34);                  \
    __m128i c4 = COL(A##40, A##41, A##42, A##43, A##44);                  \
    __m128i d0 = _mm_xor_si128(c4, _mm_rol_epi64(c1, 1));                 \
    __m128i d1 = _mm_xor_si128(c0, _mm_rol_epi64(c2, 1));                 \
    __m128i d2 = _mm_xor_si128(c1, _mm_rol_epi64(c3, 1));                 \
    __m128i d3 = _mm_xor_si128(c2, _mm_rol_epi64(c4, 1));                 \
    __m128i d4 = _mm_xor_si128(c3, _mm_rol_epi64(c0, 1));                 \
    ROW(A, E, 0, 00, 0, 0, 11, 1, 44, 22, 2, 43, 33, 3, 21, 44, 4, 14);  \
    E##00 = _mm_xor_si128(E##00, _mm_set1_epi64x((long long)(rc)));      \
    ROW(A, E, 1, 30, 3, 28, 41, 4, 20, 02, 0, 3, 13, 1, 45, 24, 2, 61);  \
    ROW(A, E, 2, 10, 1, 1, 21, 2, 6, 32, 3, 25, 43, 4, 8, 04, 0, 18);    \
    ROW(A, E, 3, 40, 4, 27, 01, 0, 36, 12, 1, 10, 23, 2, 15, 34, 3, 56); \
    ROW(A, E, 4, 20, 2, 62, 31, 3, 55, 42, 4, 39, 03, 0, 41, 14, 1, 2);  \
  } while (0)

/* Unaligned 64-bit loads and stores (vmovq); x86 is little-endian, so a
 * lane is its 8 state bytes as they are. */
#define DECLARE(i, xy) \
  __m128i a##xy = _mm_loadl_epi64((const __m128i *)(s + (i))), e##xy;
#define ABSORB(i, xy)                                                      \
  if ((i) < lanes)                                                         \
    a##xy = _mm_xor_si128(a##xy,                                           \
                          _mm_loadl_epi64((const __m128i *)(in + 8 * (i))));
#define STORE(i, xy) _mm_storel_epi64((__m128i *)(s + (i)), a##xy);

#define KECCAK_NAME(f) hq_keccak_##f##_avx512
KECCAK_BUILD(KECCAK_AVX512, KECCAK_AVX512, KECCAK_NAME)
#else
typedef int hq_keccak_avx512_unused; /* ISO C forbids an empty file */
#endif
