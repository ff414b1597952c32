/*
 * What every Keccak-f[1600] build shares (keccak_perm.h for the scalar
 * builds, keccak_avx512.c): the round constants and the lane order.
 */
#ifndef HASHQ_KECCAK_COMMON_H
#define HASHQ_KECCAK_COMMON_H

#include <stdint.h>

/* FIPS 202 §3.2.5, rc(t) for the 24 rounds of Keccak-f[1600]. */
static const uint64_t keccak_rc[24] = {
    0x0000000000000001ull, 0x0000000000008082ull, 0x800000000000808Aull,
    0x8000000080008000ull, 0x000000000000808Bull, 0x0000000080000001ull,
    0x8000000080008081ull, 0x8000000000008009ull, 0x000000000000008Aull,
    0x0000000000000088ull, 0x0000000080008009ull, 0x000000008000000Aull,
    0x000000008000808Bull, 0x800000000000008Bull, 0x8000000000008089ull,
    0x8000000000008003ull, 0x8000000000008002ull, 0x8000000000000080ull,
    0x000000000000800Aull, 0x800000008000000Aull, 0x8000000080008081ull,
    0x8000000000008080ull, 0x0000000080000001ull, 0x8000000080008008ull};

/* Lane i = x + 5y of the state array: X(i, xy) for each lane, named by
 * its x and y digits. */
#define LANES(X)                                                          \
  X(0, 00) X(1, 10) X(2, 20) X(3, 30) X(4, 40) X(5, 01) X(6, 11)          \
  X(7, 21) X(8, 31) X(9, 41) X(10, 02) X(11, 12) X(12, 22) X(13, 32)      \
  X(14, 42) X(15, 03) X(16, 13) X(17, 23) X(18, 33) X(19, 43) X(20, 04)   \
  X(21, 14) X(22, 24) X(23, 34) X(24, 44)

#endif /* HASHQ_KECCAK_COMMON_H */
