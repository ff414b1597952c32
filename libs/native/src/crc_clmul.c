/*
 * Carry-less-multiply folding for the reflected CRCs (crc32, crc32c,
 * crc64nvme): PCLMULQDQ on x86-64, PMULL on arm64. After the method of
 * Gopal et al., "Fast CRC Computation for Generic Polynomials Using
 * PCLMULQDQ Instruction" (Intel, 2009).
 *
 * A 16-byte block X read little-endian is, bit-reflected, a polynomial of
 * degree < 128: its low quadword H holds x^127..x^64, its high quadword L
 * holds x^63..x^0, X = H·x^64 + L. Moving X forward by D bits (so it can be
 * XORed into the block D bits later) needs only X·x^D mod P, and
 *   X·x^D ≡ H·(x^(D+64) mod P) + L·(x^D mod P),
 * two 64×64 carry-less products whose sum still fits 128 bits (P has
 * degree ≤ 64). A reflected carry-less product comes out multiplied by x,
 * hence the constants are x^(D+63) mod P and x^(D-1) mod P.
 *
 * Eight lanes fold by 1024 bits while the input lasts, then collapse into
 * one lane (folds by 128 bits). The 16 bytes left are reduced by the
 * caller's register function from a zero register, since that computes
 * exactly X·x^w mod P; the tail (< 16 bytes) follows the same way.
 * The constants are derived here, at setup, from the polynomials.
 * The two instruction sets differ only in the vector helpers. Where x86-64
 * has VPCLMULQDQ, a wide variant folds two blocks per 256-bit register.
 */
#include "crc.h"

#if defined(HQ_X86_64) || defined(HQ_ARM64)

#define LANES 8
/* Below this the register functions are as fast. */
#define MIN_LEN (2 * LANES * 16)

#define WIDE_LANES 8 /* 256-bit registers */
#define WIDE_MIN_LEN (2 * WIDE_LANES * 32)

struct fold_k {
  uint64_t by_lanes[2]; /* fold by LANES·128 bits */
  uint64_t by_one[2];   /* fold by 128 bits */
  uint64_t by_wide[2];  /* fold by WIDE_LANES·256 bits */
  uint64_t by_two[2];   /* fold by 256 bits */
};

static struct fold_k k_crc32, k_crc32c, k_crc64nvme;

/* x^n mod P as a 64-bit reflected word (bit i ↔ x^(63-i)); poly is the
 * reflected polynomial of width w without its x^w term. */
static uint64_t xpow_mod(unsigned n, uint64_t poly, unsigned w) {
  uint64_t r = 1ull << (w - 1); /* x^0 in the w-bit reflected register */
  while (n--) r = (r >> 1) ^ (poly & (0ull - (r & 1)));
  return r << (64 - w);
}

static void derive(struct fold_k *k, uint64_t poly, unsigned w) {
  k->by_lanes[0] = xpow_mod(LANES * 128 + 63, poly, w);
  k->by_lanes[1] = xpow_mod(LANES * 128 - 1, poly, w);
  k->by_one[0] = xpow_mod(128 + 63, poly, w);
  k->by_one[1] = xpow_mod(128 - 1, poly, w);
  k->by_wide[0] = xpow_mod(WIDE_LANES * 256 + 63, poly, w);
  k->by_wide[1] = xpow_mod(WIDE_LANES * 256 - 1, poly, w);
  k->by_two[0] = xpow_mod(256 + 63, poly, w);
  k->by_two[1] = xpow_mod(256 - 1, poly, w);
}

void hq_crc_clmul_setup(void) {
  derive(&k_crc32, 0xEDB88320u, 32);
  derive(&k_crc32c, 0x82F63B78u, 32);
  derive(&k_crc64nvme, 0x9A6C9329AC4BC9B5ull, 64);
}

#if defined(HQ_X86_64)
#include <immintrin.h>

#define TARGET __attribute__((target("pclmul,sse4.1")))
typedef __m128i vec;

TARGET static inline vec vload(const void *p) {
  return _mm_loadu_si128((const __m128i *)p);
}
TARGET static inline void vstore(void *p, vec x) {
  _mm_storeu_si128((__m128i *)p, x);
}
TARGET static inline vec vxor(vec a, vec b) { return _mm_xor_si128(a, b); }
TARGET static inline vec vlow64(uint64_t v) {
  return _mm_cvtsi64_si128((long long)v);
}
/* lo(x)·lo(k) + hi(x)·hi(k) */
TARGET static inline vec fold(vec x, vec k) {
  return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
                       _mm_clmulepi64_si128(x, k, 0x11));
}

#else /* HQ_ARM64 */
#include <arm_neon.h>

#define TARGET __attribute__((target("+crypto"))) /* PMULL: FEAT_PMULL, with AES */
typedef uint64x2_t vec;

TARGET static inline vec vload(const void *p) {
  return vreinterpretq_u64_u8(vld1q_u8((const uint8_t *)p));
}
TARGET static inline void vstore(void *p, vec x) {
  vst1q_u8((uint8_t *)p, vreinterpretq_u8_u64(x));
}
TARGET static inline vec vxor(vec a, vec b) { return veorq_u64(a, b); }
TARGET static inline vec vlow64(uint64_t v) {
  return vcombine_u64(vcreate_u64(v), vcreate_u64(0));
}
TARGET static inline vec fold(vec x, vec k) {
  poly128_t lo = vmull_p64((poly64_t)vgetq_lane_u64(x, 0),
                           (poly64_t)vgetq_lane_u64(k, 0));
  poly128_t hi = vmull_high_p64(vreinterpretq_p64_u64(x),
                                vreinterpretq_p64_u64(k));
  return veorq_u64(vreinterpretq_u64_p128(lo), vreinterpretq_u64_p128(hi));
}
#endif

/* Folds the first n rounded down to 16 bytes (n >= LANES·16) with reg
 * XORed into the first bytes; writes the 16 bytes left to reduce and
 * returns how many input bytes it consumed. */
TARGET static size_t fold_all(const struct fold_k *k, uint64_t reg,
                              const uint8_t *p, size_t n, uint8_t out[16]) {
  const vec kl = vload(k->by_lanes), k1 = vload(k->by_one);
  vec x[LANES];
  for (int i = 0; i < LANES; i++) x[i] = vload(p + 16 * i);
  x[0] = vxor(x[0], vlow64(reg));
  size_t done = LANES * 16;
  for (; n - done >= LANES * 16; done += LANES * 16)
    for (int i = 0; i < LANES; i++)
      x[i] = vxor(fold(x[i], kl), vload(p + done + 16 * i));
  vec a = x[0];
  for (int i = 1; i < LANES; i++) a = vxor(fold(a, k1), x[i]);
  for (; n - done >= 16; done += 16) a = vxor(fold(a, k1), vload(p + done));
  vstore(out, a);
  return done;
}

#if defined(HQ_X86_64)
/* VPCLMULQDQ on YMM registers: dispatch.c sets HQ_CPU_X86_VPCLMUL only when
 * the OS saves them; the wide path also needs PCLMULQDQ and SSE4.1. */
int hq_crc_clmul_wide(uint32_t cpu) {
  const uint32_t need = HQ_CPU_X86_VPCLMUL | HQ_CPU_X86_AVX2 |
                        HQ_CPU_X86_PCLMUL | HQ_CPU_X86_SSE41;
  return (cpu & need) == need;
}

#define TARGET_WIDE __attribute__((target("pclmul,sse4.1,avx2,vpclmulqdq")))

TARGET_WIDE static inline __m256i fold_wide(__m256i x, __m256i k) {
  return _mm256_xor_si256(_mm256_clmulepi64_epi128(x, k, 0x00),
                          _mm256_clmulepi64_epi128(x, k, 0x11));
}

TARGET_WIDE static inline __m256i load_wide(const uint8_t *p) {
  return _mm256_loadu_si256((const __m256i *)(const void *)p);
}

/* fold_all with 256-bit registers (n >= WIDE_LANES·32): each holds two
 * consecutive blocks, so every fold moves both by the same distance. */
TARGET_WIDE static size_t fold_all_wide(const struct fold_k *k, uint64_t reg,
                                        const uint8_t *p, size_t n,
                                        uint8_t out[16]) {
  const __m256i kw = _mm256_broadcastsi128_si256(vload(k->by_wide));
  const __m256i k2 = _mm256_broadcastsi128_si256(vload(k->by_two));
  const vec k1 = vload(k->by_one);
  __m256i y[WIDE_LANES];
  for (int i = 0; i < WIDE_LANES; i++) y[i] = load_wide(p + 32 * i);
  y[0] = _mm256_xor_si256(y[0], _mm256_set_epi64x(0, 0, 0, (long long)reg));
  size_t done = WIDE_LANES * 32;
  for (; n - done >= WIDE_LANES * 32; done += WIDE_LANES * 32)
    for (int i = 0; i < WIDE_LANES; i++)
      y[i] = _mm256_xor_si256(fold_wide(y[i], kw), load_wide(p + done + 32 * i));
  __m256i w = y[0];
  for (int i = 1; i < WIDE_LANES; i++)
    w = _mm256_xor_si256(fold_wide(w, k2), y[i]);
  vec a = vxor(fold(_mm256_castsi256_si128(w), k1),
               _mm256_extracti128_si256(w, 1));
  for (; n - done >= 16; done += 16) a = vxor(fold(a, k1), vload(p + done));
  vstore(out, a);
  return done;
}

static size_t fold_any(const struct fold_k *k, uint64_t reg, const uint8_t *p,
                       size_t n, uint8_t out[16], int wide) {
  if (wide && n >= WIDE_MIN_LEN) return fold_all_wide(k, reg, p, n, out);
  return fold_all(k, reg, p, n, out);
}
#else
int hq_crc_clmul_wide(uint32_t cpu) {
  (void)cpu;
  return 0;
}

static size_t fold_any(const struct fold_k *k, uint64_t reg, const uint8_t *p,
                       size_t n, uint8_t out[16], int wide) {
  (void)wide;
  return fold_all(k, reg, p, n, out);
}
#endif

uint32_t hq_crc32_reg_clmul(uint32_t reg, const uint8_t *p, size_t n,
                            hq_crc32_fn rest, int wide) {
  if (n < MIN_LEN) return rest(reg, p, n);
  uint8_t x[16];
  size_t done = fold_any(&k_crc32, reg, p, n, x, wide);
  return rest(rest(0, x, 16), p + done, n - done);
}

uint32_t hq_crc32c_reg_clmul(uint32_t reg, const uint8_t *p, size_t n,
                             hq_crc32_fn rest, int wide) {
  if (n < MIN_LEN) return rest(reg, p, n);
  uint8_t x[16];
  size_t done = fold_any(&k_crc32c, reg, p, n, x, wide);
  return rest(rest(0, x, 16), p + done, n - done);
}

uint64_t hq_crc64nvme_reg_clmul(uint64_t reg, const uint8_t *p, size_t n,
                                int wide) {
  if (n < MIN_LEN) return hq_crc64nvme_reg(reg, p, n);
  uint8_t x[16];
  size_t done = fold_any(&k_crc64nvme, reg, p, n, x, wide);
  return hq_crc64nvme_reg(hq_crc64nvme_reg(0, x, 16), p + done, n - done);
}

#else
typedef int hq_crc_clmul_unused; /* ISO C forbids an empty translation unit */
#endif
