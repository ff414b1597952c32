/*
 * What every Keccak-f[1600] build shares (keccak_perm.h for the scalar
 * builds, keccak_avx512.c): the round constants, the lane order and the
 * block loop with its entry points.
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

/*
 * The functions of one build: NAME(f1600), the bare permutation for
 * squeezing, and NAME(blocks_r72/r136/r168), hq_algo.blocks per rate, all
 * through one block loop that XORs n blocks of `lanes` lanes into the
 * state and permutes after each (lanes = 0: just permute n times, `in` is
 * not read); it is inlined with a constant `lanes`, so the loads unroll
 * per rate. The includer defines, per lane, DECLARE(i, xy) (load into
 * a##xy, declare e##xy), ABSORB(i, xy) and STORE(i, xy), and ROUND(A, E,
 * rc) reading lanes A.. and writing lanes E.. (two rounds per iteration
 * swap them back, so nothing is copied). STORAGE: storage class and
 * attributes of the entry points; ATTRS: the attributes the loop needs.
 */
#define KECCAK_BUILD(STORAGE, ATTRS, NAME)                                   \
  static inline __attribute__((always_inline)) ATTRS void NAME(absorb)(       \
      uint64_t *s, const uint8_t *in, size_t n, unsigned lanes) {            \
    LANES(DECLARE)                                                           \
    while (n--) {                                                            \
      LANES(ABSORB)                                                          \
      if (lanes) in += 8 * lanes;                                            \
      for (int r = 0; r < 24; r += 2) {                                      \
        ROUND(a, e, keccak_rc[r]);                                           \
        ROUND(e, a, keccak_rc[r + 1]);                                       \
      }                                                                      \
    }                                                                        \
    LANES(STORE)                                                             \
  }                                                                          \
  STORAGE void NAME(f1600)(uint64_t *s) { NAME(absorb)(s, NULL, 1, 0); }     \
  STORAGE void NAME(blocks_r72)(hq_ctx *c, const uint8_t *in, size_t n) {    \
    NAME(absorb)(c->s.w64, in, n, 72 / 8);                                   \
  }                                                                          \
  STORAGE void NAME(blocks_r136)(hq_ctx *c, const uint8_t *in, size_t n) {   \
    NAME(absorb)(c->s.w64, in, n, 136 / 8);                                  \
  }                                                                          \
  STORAGE void NAME(blocks_r168)(hq_ctx *c, const uint8_t *in, size_t n) {   \
    NAME(absorb)(c->s.w64, in, n, 168 / 8);                                  \
  }

#endif /* HASHQ_KECCAK_COMMON_H */
