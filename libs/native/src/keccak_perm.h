/*
 * Keccak-f[1600] block loop, included by keccak.c (portable build, lane
 * complementing) and keccak_bmi.c (built for BMI1/BMI2: andn does NOT-AND
 * in one instruction, so no complementing, and rorx rotates without a
 * copy). The includer defines KECCAK_COMPLEMENT (0/1), KECCAK_TARGET
 * (storage class and function attributes) and KECCAK_NAME(f).
 *
 * The 25 lanes live in local variables for a whole run of blocks, a round
 * reads lanes a.. and writes lanes e.. (the next round the other way
 * round), so nothing is copied; rounds are unrolled two at a time so the
 * loop stays small enough for the decoded-op cache. With complementing
 * (the lane complementing transform of the Keccak team's implementation
 * overview, §2.2) six lanes are kept inverted in registers, which turns
 * most NOT-AND pairs of chi into a single AND or OR; the inversions are
 * written as constant masks and folded away by the compiler, and undone
 * before the state is written back.
 */
#include "internal.h"
#include "keccak_common.h"

#define ROL(x, n) hq_rotl64((x), (n))

/* With KECCAK_COMPLEMENT, lanes stored inverted between rounds: (1,0)
 * (2,0) (3,1) (2,2) (2,3) (0,4). KC_xy is the mask of lane (x,y). */
#if KECCAK_COMPLEMENT
#define KC_INV (~0ull)
#else
#define KC_INV 0
#endif
#define KC_00 0
#define KC_10 KC_INV
#define KC_20 KC_INV
#define KC_30 0
#define KC_40 0
#define KC_01 0
#define KC_11 0
#define KC_21 0
#define KC_31 KC_INV
#define KC_41 0
#define KC_02 0
#define KC_12 0
#define KC_22 KC_INV
#define KC_32 0
#define KC_42 0
#define KC_03 0
#define KC_13 0
#define KC_23 KC_INV
#define KC_33 0
#define KC_43 0
#define KC_04 KC_INV
#define KC_14 0
#define KC_24 0
#define KC_34 0
#define KC_44 0
/* Column parities c[x] come out inverted when column x holds an odd
 * number of inverted lanes (x = 0..3), so d[x] = c[x-1] ^ rol(c[x+1], 1)
 * is inverted for x = 0 and x = 3. */
#define DM_0 KC_INV
#define DM_1 0
#define DM_2 0
#define DM_3 KC_INV
#define DM_4 0

/* One row of rho, pi and chi: output row y of E from the five source
 * lanes (lane s, column x, rotation r) of A. mK is the inversion of each
 * pi/rho output; chi is written on the true values and the constant masks
 * fold into AND/OR/ANDN forms. */
#define ROW(A, E, y, s0, x0, r0, s1, x1, r1, s2, x2, r2, s3, x3, r3, s4,  \
            x4, r4)                                                       \
  do {                                                                    \
    const uint64_t m0 = KC_##s0 ^ DM_##x0, m1 = KC_##s1 ^ DM_##x1;        \
    const uint64_t m2 = KC_##s2 ^ DM_##x2, m3 = KC_##s3 ^ DM_##x3;        \
    const uint64_t m4 = KC_##s4 ^ DM_##x4;                                \
    uint64_t b0 = ROL(A##s0 ^ d##x0, r0), b1 = ROL(A##s1 ^ d##x1, r1);    \
    uint64_t b2 = ROL(A##s2 ^ d##x2, r2), b3 = ROL(A##s3 ^ d##x3, r3);    \
    uint64_t b4 = ROL(A##s4 ^ d##x4, r4);                                 \
    E##0##y = ((b0 ^ m0) ^ (~(b1 ^ m1) & (b2 ^ m2))) ^ KC_0##y;           \
    E##1##y = ((b1 ^ m1) ^ (~(b2 ^ m2) & (b3 ^ m3))) ^ KC_1##y;           \
    E##2##y = ((b2 ^ m2) ^ (~(b3 ^ m3) & (b4 ^ m4))) ^ KC_2##y;           \
    E##3##y = ((b3 ^ m3) ^ (~(b4 ^ m4) & (b0 ^ m0))) ^ KC_3##y;           \
    E##4##y = ((b4 ^ m4) ^ (~(b0 ^ m0) & (b1 ^ m1))) ^ KC_4##y;           \
  } while (0)

/* One round A → E. Pi sends lane (x,y) to (y, 2x+3y); the rotation
 * offsets are those of FIPS 202 Table 2. */
#define ROUND(A, E, rc)                                                   \
  do {                                                                    \
    uint64_t c0 = A##00 ^ A##01 ^ A##02 ^ A##03 ^ A##04;                  \
    uint64_t c1 = A##10 ^ A##11 ^ A##12 ^ A##13 ^ A##14;                  \
    uint64_t c2 = A##20 ^ A##21 ^ A##22 ^ A##23 ^ A##24;                  \
    uint64_t c3 = A##30 ^ A##31 ^ A##32 ^ A##33 ^ A##34;                  \
    uint64_t c4 = A##40 ^ A##41 ^ A##42 ^ A##43 ^ A##44;                  \
    uint64_t d0 = c4 ^ ROL(c1, 1), d1 = c0 ^ ROL(c2, 1);                  \
    uint64_t d2 = c1 ^ ROL(c3, 1), d3 = c2 ^ ROL(c4, 1);                  \
    uint64_t d4 = c3 ^ ROL(c0, 1);                                        \
    ROW(A, E, 0, 00, 0, 0, 11, 1, 44, 22, 2, 43, 33, 3, 21, 44, 4, 14);  \
    E##00 ^= (rc);                                                        \
    ROW(A, E, 1, 30, 3, 28, 41, 4, 20, 02, 0, 3, 13, 1, 45, 24, 2, 61);  \
    ROW(A, E, 2, 10, 1, 1, 21, 2, 6, 32, 3, 25, 43, 4, 8, 04, 0, 18);    \
    ROW(A, E, 3, 40, 4, 27, 01, 0, 36, 12, 1, 10, 23, 2, 15, 34, 3, 56); \
    ROW(A, E, 4, 20, 2, 62, 31, 3, 55, 42, 4, 39, 03, 0, 41, 14, 1, 2);  \
  } while (0)

#define DECLARE(i, xy) uint64_t a##xy = s[i] ^ KC_##xy, e##xy;
/* KECCAK_LOAD: how a lane is read from the input (an includer that knows
 * the input is aligned may define it). */
#ifndef KECCAK_LOAD
#define KECCAK_LOAD(p) hq_load64_le(p)
#endif
#define ABSORB(i, xy) \
  if ((i) < lanes) a##xy ^= KECCAK_LOAD(in + 8 * (i));
#define STORE(i, xy) s[i] = a##xy ^ KC_##xy;

/* The block loop and the functions of this build (keccak_common.h). */
KECCAK_BUILD(KECCAK_TARGET, , KECCAK_NAME)
