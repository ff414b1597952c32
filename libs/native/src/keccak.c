/*
 * Keccak-f[1600] sponges of FIPS 202: SHA3-256, SHA3-512, SHAKE128,
 * SHAKE256. Portable 64-bit C, no table lookups on data; a BMI1/BMI2
 * build of the same block loop (keccak_bmi.c) is picked where the CPU
 * has both, and an AVX-512VL one (keccak_avx512.c) where it has that.
 *
 * ctx->s.w64[i] holds lane i = x + 5y as a host integer (bytes 8i..8i+7 of
 * the FIPS 202 state, little-endian), so the serialized state is the
 * standard byte string on every host.
 */
#define KECCAK_COMPLEMENT 1
#define KECCAK_TARGET static
#define KECCAK_NAME(f) keccak_##f##_portable
#include "keccak_perm.h"

/* The permutation used for squeezing: the same build as the blocks. */
static void (*keccak_f1600)(uint64_t *s) = keccak_f1600_portable;

/* The all-zero state: hq_init zeroes the whole context before calling
 * init, so there is nothing left to do (a second memset of the 200 state
 * bytes is a measurable part of a short one-shot). */
static void keccak_init(hq_ctx *c, const uint8_t *custom, size_t custom_len) {
  (void)c;
  (void)custom;
  (void)custom_len;
}

/* Pad a tail of n < rate bytes (domain bits + pad10*1, FIPS 202 §5.1,
 * §6), absorb it into s and squeeze outlen bytes. The tail and the padding
 * are XORed into the lanes directly: whole lanes of the tail, then the
 * lane it ends in with the domain byte after its last byte. */
static void keccak_pad_squeeze(uint64_t *s, const uint8_t *tail, size_t n,
                               uint8_t *out, size_t outlen, unsigned rate,
                               uint8_t domain) {
  size_t full = n / 8, i;
#if defined(HQ_RISCV64)
  uint64_t copy[HQ_MAX_BLOCK / 8]; /* whole-lane loads need alignment */
  if (!hq_aligned8(tail)) tail = memcpy(copy, tail, n);
  for (i = 0; i < full; i++) s[i] ^= hq_load64_le_aligned(tail + 8 * i);
#else
  for (i = 0; i < full; i++) s[i] ^= hq_load64_le(tail + 8 * i);
#endif
  uint64_t last = (uint64_t)domain << (8 * (n % 8));
  for (i = 8 * full; i < n; i++) last ^= (uint64_t)tail[i] << (8 * (i % 8));
  s[full] ^= last;
  s[rate / 8 - 1] ^= 0x8000000000000000ull;
  for (;;) {
    keccak_f1600(s);
    size_t take = outlen < rate ? outlen : rate;
    i = 0;
#if defined(HQ_RISCV64)
    if (hq_aligned8(out))
      for (; i + 8 <= take; i += 8) hq_store64_le_aligned(out + i, s[i / 8]);
#endif
    for (; i + 8 <= take; i += 8) hq_store64_le(out + i, s[i / 8]);
    for (; i < take; i++) out[i] = (uint8_t)(s[i / 8] >> (8 * (i % 8)));
    out += take;
    outlen -= take;
    if (!outlen) break;
  }
}

static void keccak_final(hq_ctx *c, uint8_t *out, size_t outlen,
                         unsigned rate, uint8_t domain) {
  keccak_pad_squeeze(c->s.w64, c->buf, c->buffered, out, outlen, rate,
                     domain);
}

/* hq_hash without a context: the zero state, the whole blocks straight
 * from the input, the tail padded from the input too (no init, no copy
 * into the block buffer, no memset of the 392-byte context). */
static inline void keccak_oneshot(const hq_algo *a, const uint8_t *in,
                                  size_t len, uint8_t *out, size_t outlen,
                                  unsigned rate, uint8_t domain) {
  hq_ctx c; /* the block functions use c.s only */
  uint64_t *s = c.s.w64;
#define KECCAK_ZERO(i) s[i] = 0;
  KECCAK_ZERO(0) KECCAK_ZERO(1) KECCAK_ZERO(2) KECCAK_ZERO(3) KECCAK_ZERO(4)
  KECCAK_ZERO(5) KECCAK_ZERO(6) KECCAK_ZERO(7) KECCAK_ZERO(8) KECCAK_ZERO(9)
  KECCAK_ZERO(10) KECCAK_ZERO(11) KECCAK_ZERO(12) KECCAK_ZERO(13)
  KECCAK_ZERO(14) KECCAK_ZERO(15) KECCAK_ZERO(16) KECCAK_ZERO(17)
  KECCAK_ZERO(18) KECCAK_ZERO(19) KECCAK_ZERO(20) KECCAK_ZERO(21)
  KECCAK_ZERO(22) KECCAK_ZERO(23) KECCAK_ZERO(24)
#undef KECCAK_ZERO
  size_t n = len / rate;
  if (n) a->blocks(&c, in, n);
  keccak_pad_squeeze(s, in + n * rate, len - n * rate, out, outlen, rate,
                     domain);
}

/* SHA3 appends the bits 01, SHAKE 1111 (FIPS 202 §6.1, §6.2): with the
 * first padding bit, the bytes 0x06 and 0x1F. */
#define KECCAK_FINALS(var, rate, domain)                                  \
  static void var##_final(hq_ctx *c, uint8_t *out, size_t len) {          \
    keccak_final(c, out, len, rate, domain);                              \
  }                                                                       \
  static void var##_oneshot(const uint8_t *in, size_t len, uint8_t *out,  \
                            size_t outlen) {                              \
    keccak_oneshot(&hq_algo_##var, in, len, out, outlen, rate, domain);   \
  }
KECCAK_FINALS(sha3_256, 136, 0x06)
KECCAK_FINALS(sha3_512, 72, 0x06)
KECCAK_FINALS(shake128, 168, 0x1F)
KECCAK_FINALS(shake256, 136, 0x1F)

/* Pick the AVX-512VL build where the CPU (and OS) has it, else the
 * BMI1/BMI2 build where the CPU has both. */
#if defined(HQ_X86_64)
#define KECCAK_SELECT(rate)                                               \
  static void select_r##rate(hq_algo *self, uint32_t cpu) {               \
    const uint32_t bmi = HQ_CPU_X86_BMI1 | HQ_CPU_X86_BMI2;               \
    if (cpu & HQ_CPU_X86_AVX512VL) {                                      \
      self->blocks = hq_keccak_blocks_r##rate##_avx512;                   \
      self->impl = "avx512vl";                                            \
      keccak_f1600 = hq_keccak_f1600_avx512;                              \
    } else if ((cpu & bmi) == bmi) {                                      \
      self->blocks = hq_keccak_blocks_r##rate##_bmi;                      \
      self->impl = "bmi2";                                                \
      keccak_f1600 = hq_keccak_f1600_bmi;                                 \
    } else {                                                              \
      self->blocks = keccak_blocks_r##rate##_portable;                    \
      self->impl = "portable";                                            \
      keccak_f1600 = keccak_f1600_portable;                               \
    }                                                                     \
  }
#elif defined(HQ_RISCV64)
/* riscv64: the Zbb build where the CPU has it, else the rv64gc one. */
#define KECCAK_SELECT(rate)                                               \
  static void select_r##rate(hq_algo *self, uint32_t cpu) {               \
    int zbb = (cpu & HQ_CPU_RV_ZBB) != 0;                                 \
    self->blocks = zbb ? hq_keccak_blocks_r##rate##_zbb                   \
                       : hq_keccak_blocks_r##rate##_rv64;                 \
    self->impl = zbb ? "zbb" : "rv64gc";                                  \
    keccak_f1600 = zbb ? hq_keccak_f1600_zbb : hq_keccak_f1600_rv64;      \
  }
#else
#define KECCAK_SELECT(rate)                                               \
  static void select_r##rate(hq_algo *self, uint32_t cpu) {               \
    (void)cpu;                                                            \
    self->blocks = keccak_blocks_r##rate##_portable;                      \
    self->impl = "portable";                                              \
  }
#endif
KECCAK_SELECT(72)
KECCAK_SELECT(136)
KECCAK_SELECT(168)

#define KECCAK_ALGO(var, id, name, dlen, rate, xof)                        \
  hq_algo hq_algo_##var = {                                                \
      .info = {id, name, dlen, rate, xof, 0, "FIPS 202"},                  \
      .word_size = 8,                                                      \
      .state_words = 25,                                                   \
      .init = keccak_init,                                                 \
      .blocks = keccak_blocks_r##rate##_portable,                          \
      .final = var##_final,                                                \
      .oneshot = var##_oneshot,                                            \
      .select = select_r##rate,                                            \
      .impl = "portable",                                                  \
  };

KECCAK_ALGO(sha3_256, HQ_SHA3_256, "sha3-256", 32, 136, 0)
KECCAK_ALGO(sha3_512, HQ_SHA3_512, "sha3-512", 64, 72, 0)
KECCAK_ALGO(shake128, HQ_SHAKE128, "shake128", 32, 168, 1)
KECCAK_ALGO(shake256, HQ_SHAKE256, "shake256", 32, 136, 1)
