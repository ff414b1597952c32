/*
 * Ascon hashing, both generations (../test/vectors/README.md §3 lists
 * the differences):
 *   NIST SP 800-232: Ascon-Hash256, Ascon-XOF128, Ascon-CXOF128 — bytes
 *     loaded little-endian, padding byte 0x01, p12 everywhere;
 *   Ascon v1.2 (NIST LWC final round; eBASH names asconhashv12,
 *     asconhashav12, asconxofv12, asconxofav12) — bytes loaded big-endian,
 *     padding byte 0x80, the "a" variants use p8 between blocks.
 * ctx->s.w64[0..4] hold x0..x4 as plain 64-bit integers. The rate is one
 * 8-byte word; every message is padded (not lazy): the core hands us whole
 * blocks and the buffered tail (< 8 bytes) at the end.
 */
/* Instruction order as in ascon_bmi.c (which see), for the portable x86-64
 * build too. Before ascon_perm.h includes internal.h, so that its inline
 * helpers match. */
#if defined(__x86_64__) && defined(__GNUC__) && __GNUC__ >= 6 && !defined(__clang__)
#pragma GCC target("tune=znver1")
#pragma GCC optimize("schedule-insns", "sched-pressure")
#endif
#define ASCON_TARGET static
#define ASCON_NAME(f) hq_ascon_##f##_portable
#include "ascon_perm.h"

/* The permutation for init, padding and squeezing: the same build as the
 * block loops (select_* below). */
static void (*ascon_p)(uint64_t *s, int rounds) = hq_ascon_permute_portable;

/* Every variant starts from p12(IV, 0, 0, 0, 0): a constant per variant,
 * computed once at dispatch time (select_* below) instead of once per
 * message — it is most of the cost of hashing a short message. */
#define ASCON_VARIANTS 7
static uint64_t initial_iv[ASCON_VARIANTS];
static uint64_t initial_state[ASCON_VARIANTS][5];

static void initial_states_compute(void);

static void ascon_start(hq_ctx *c, uint64_t iv) {
  uint64_t *s = c->s.w64;
  for (int i = 0; i < ASCON_VARIANTS; i++) {
    if (initial_iv[i] == iv) {
      memcpy(s, initial_state[i], sizeof initial_state[i]);
      return;
    }
  }
  s[0] = iv;
  s[1] = s[2] = s[3] = s[4] = 0;
  ascon_p(s, 12);
}

/* The last, partial block of len < 8 bytes with its padding, as the word
 * XORed into x0. */
static uint64_t pad_le(const uint8_t *p, size_t len) {
  uint64_t w = 0;
  for (size_t i = 0; i < len; i++) w |= (uint64_t)p[i] << (8 * i);
  return w ^ (uint64_t)0x01 << (8 * len);
}
static uint64_t pad_be(const uint8_t *p, size_t len) {
  uint64_t w = 0;
  for (size_t i = 0; i < len; i++) w |= (uint64_t)p[i] << (56 - 8 * i);
  return w ^ (uint64_t)0x80 << (56 - 8 * len);
}

/* Squeeze: 8 bytes of x0 per block, p^rounds between blocks. */
static void squeeze(uint64_t *s, uint8_t *out, size_t len, int big_endian,
                    int rounds) {
  for (; len >= 8; out += 8, len -= 8) {
    if (big_endian) hq_store64_be(out, s[0]);
    else hq_store64_le(out, s[0]);
    if (len == 8) return;
    ascon_p(s, rounds);
  }
  uint8_t w[8];
  if (big_endian) hq_store64_be(w, s[0]);
  else hq_store64_le(w, s[0]);
  memcpy(out, w, len);
}

/* SP 800-232 §5: initial values (Tables 11, 12, 13 of the standard). */
#define IV_HASH256 0x0000080100cc0002ull
#define IV_XOF128 0x0000080000cc0003ull
#define IV_CXOF128 0x0000080000cc0004ull

static void hash256_init(hq_ctx *c, const uint8_t *z, size_t zlen) {
  (void)z, (void)zlen;
  ascon_start(c, IV_HASH256);
}
static void xof128_init(hq_ctx *c, const uint8_t *z, size_t zlen) {
  (void)z, (void)zlen;
  ascon_start(c, IV_XOF128);
}
/* SP 800-232 §5.3: the customization string Z goes in first: its length
 * in bits as one block, then Z itself, padded like a message (an empty Z
 * still gives one padding block). */
static void cxof128_init(hq_ctx *c, const uint8_t *z, size_t zlen) {
  uint64_t *s = c->s.w64;
  ascon_start(c, IV_CXOF128);
  s[0] ^= (uint64_t)zlen * 8;
  ascon_p(s, 12);
  for (; zlen >= 8; z += 8, zlen -= 8) {
    s[0] ^= hq_load64_le(z);
    ascon_p(s, 12);
  }
  s[0] ^= pad_le(z, zlen);
  ascon_p(s, 12);
}

static void sp800_final(hq_ctx *c, uint8_t *out, size_t len) {
  c->s.w64[0] ^= pad_le(c->buf, c->buffered);
  ascon_p(c->s.w64, 12);
  squeeze(c->s.w64, out, len, 0, 12);
}

/* Ascon v1.2: x0 = rate·8 << 48 | a << 40 | (a − b) << 32 | hash bits
 * (rate 8 bytes, a = 12 rounds, b = 12 or 8; 256 bits for the hashes, 0
 * for the XOFs, whose output length is not bound in). */
#define IV_HASHV12 0x00400c0000000100ull
#define IV_HASHAV12 0x00400c0400000100ull
#define IV_XOFV12 0x00400c0000000000ull
#define IV_XOFAV12 0x00400c0400000000ull

static void hashv12_init(hq_ctx *c, const uint8_t *z, size_t zlen) {
  (void)z, (void)zlen;
  ascon_start(c, IV_HASHV12);
}
static void hashav12_init(hq_ctx *c, const uint8_t *z, size_t zlen) {
  (void)z, (void)zlen;
  ascon_start(c, IV_HASHAV12);
}
static void xofv12_init(hq_ctx *c, const uint8_t *z, size_t zlen) {
  (void)z, (void)zlen;
  ascon_start(c, IV_XOFV12);
}
static void xofav12_init(hq_ctx *c, const uint8_t *z, size_t zlen) {
  (void)z, (void)zlen;
  ascon_start(c, IV_XOFAV12);
}

/* The padded last block always gets p12, even in the "a" variants. */
static void v12_final(hq_ctx *c, uint8_t *out, size_t len, int rounds) {
  c->s.w64[0] ^= pad_be(c->buf, c->buffered);
  ascon_p(c->s.w64, 12);
  squeeze(c->s.w64, out, len, 1, rounds);
}
static void v12_final_p12(hq_ctx *c, uint8_t *out, size_t len) {
  v12_final(c, out, len, 12);
}
static void v12_final_p8(hq_ctx *c, uint8_t *out, size_t len) {
  v12_final(c, out, len, 8);
}

/* hq_hash without a context (no customization string): the variant's
 * initial state, the whole blocks straight from the input, the padded
 * tail, the output squeezed straight into out (eBASH's crypto_hash does
 * the same; the context's buffering cost a short message about 8 %). */
static inline void ascon_oneshot(const hq_algo *a, uint64_t iv,
                                 const uint8_t *in, size_t len, uint8_t *out,
                                 size_t outlen, int big_endian, int rounds) {
  hq_ctx c; /* the block functions use c.s only */
  uint64_t *s = c.s.w64;
  ascon_start(&c, iv);
  size_t n = len / 8;
  if (n) a->blocks(&c, in, n);
  in += 8 * n;
  s[0] ^= big_endian ? pad_be(in, len % 8) : pad_le(in, len % 8);
  ascon_p(s, 12);
  squeeze(s, out, outlen, big_endian, rounds);
}
#define ASCON_ONESHOT(var, iv, big_endian, rounds)                           \
  static void var##_oneshot(const uint8_t *in, size_t len, uint8_t *out,    \
                            size_t outlen) {                                \
    ascon_oneshot(&hq_algo_##var, iv, in, len, out, outlen, big_endian,     \
                  rounds);                                                  \
  }
ASCON_ONESHOT(ascon_hash256, IV_HASH256, 0, 12)
ASCON_ONESHOT(ascon_xof128, IV_XOF128, 0, 12)
ASCON_ONESHOT(asconhashv12, IV_HASHV12, 1, 12)
ASCON_ONESHOT(asconhashav12, IV_HASHAV12, 1, 8)
ASCON_ONESHOT(asconxofv12, IV_XOFV12, 1, 12)
ASCON_ONESHOT(asconxofav12, IV_XOFAV12, 1, 8)

static void initial_states_compute(void) {
  static const uint64_t ivs[ASCON_VARIANTS] = {
      IV_HASH256, IV_XOF128, IV_CXOF128, IV_HASHV12,
      IV_HASHAV12, IV_XOFV12, IV_XOFAV12};
  for (int i = 0; i < ASCON_VARIANTS; i++) {
    uint64_t s[5] = {ivs[i], 0, 0, 0, 0};
    hq_ascon_permute_portable(s, 12);
    memcpy(initial_state[i], s, sizeof s);
    initial_iv[i] = ivs[i];
  }
}

/* Pick the BMI1/BMI2 build of the block loop where the CPU has both. */
#if defined(HQ_X86_64)
#define ASCON_SELECT(mode)                                                \
  static void select_##mode(hq_algo *self, uint32_t cpu) {                \
    const uint32_t bmi = HQ_CPU_X86_BMI1 | HQ_CPU_X86_BMI2;               \
    int fast = (cpu & bmi) == bmi;                                        \
    self->blocks = fast ? hq_ascon_blocks_##mode##_bmi                    \
                        : hq_ascon_blocks_##mode##_portable;              \
    self->impl = fast ? "bmi2" : "portable";                              \
    ascon_p = fast ? hq_ascon_permute_bmi : hq_ascon_permute_portable;    \
    initial_states_compute();                                             \
  }
#elif defined(HQ_RISCV64)
/* riscv64: the Zbb build where the CPU has it, else the rv64gc one. */
#define ASCON_SELECT(mode)                                                \
  static void select_##mode(hq_algo *self, uint32_t cpu) {                \
    int zbb = (cpu & HQ_CPU_RV_ZBB) != 0;                                 \
    self->blocks = zbb ? hq_ascon_blocks_##mode##_zbb                     \
                       : hq_ascon_blocks_##mode##_rv64;                   \
    self->impl = zbb ? "zbb" : "rv64gc";                                  \
    ascon_p = zbb ? hq_ascon_permute_zbb : hq_ascon_permute_rv64;         \
    initial_states_compute();                                             \
  }
#else
#define ASCON_SELECT(mode)                                                \
  static void select_##mode(hq_algo *self, uint32_t cpu) {                \
    (void)cpu;                                                            \
    self->blocks = hq_ascon_blocks_##mode##_portable;                     \
    self->impl = "portable";                                              \
    ascon_p = hq_ascon_permute_portable;                                  \
    initial_states_compute();                                             \
  }
#endif
ASCON_SELECT(le12)
ASCON_SELECT(be12)
ASCON_SELECT(be8)

#define SP800 "NIST SP 800-232"
#define V12 "Ascon v1.2 (NIST LWC final round)"

#define ASCON_ALGO(var, id, name, xof, custom, std, init_fn, final_fn, mode, \
                   oneshot_fn)                                              \
  hq_algo hq_algo_##var = {                                                 \
      .info = {id, name, 32, 8, xof, custom, std},                          \
      .word_size = 8,                                                       \
      .state_words = 5,                                                     \
      .init = init_fn,                                                      \
      .blocks = hq_ascon_blocks_##mode##_portable,                          \
      .final = final_fn,                                                    \
      .select = select_##mode,                                              \
      .impl = "portable",                                                   \
      .oneshot = oneshot_fn,                                                \
  };

ASCON_ALGO(ascon_hash256, HQ_ASCON_HASH256, "ascon-hash256", 0, 0, SP800,
           hash256_init, sp800_final, le12, ascon_hash256_oneshot)
ASCON_ALGO(ascon_xof128, HQ_ASCON_XOF128, "ascon-xof128", 1, 0, SP800,
           xof128_init, sp800_final, le12, ascon_xof128_oneshot)
ASCON_ALGO(ascon_cxof128, HQ_ASCON_CXOF128, "ascon-cxof128", 1, 1, SP800,
           cxof128_init, sp800_final, le12, NULL)
ASCON_ALGO(asconhashv12, HQ_ASCONHASHV12, "asconhashv12", 0, 0, V12,
           hashv12_init, v12_final_p12, be12, asconhashv12_oneshot)
ASCON_ALGO(asconhashav12, HQ_ASCONHASHAV12, "asconhashav12", 0, 0, V12,
           hashav12_init, v12_final_p8, be8, asconhashav12_oneshot)
ASCON_ALGO(asconxofv12, HQ_ASCONXOFV12, "asconxofv12", 1, 0, V12,
           xofv12_init, v12_final_p12, be12, asconxofv12_oneshot)
ASCON_ALGO(asconxofav12, HQ_ASCONXOFAV12, "asconxofav12", 1, 0, V12,
           xofav12_init, v12_final_p8, be8, asconxofav12_oneshot)
