/*
 * Esch256 and Esch384, the hash functions of the Sparkle family (NIST LWC
 * final round, "v2" in the NIST benchmarking repository).
 * Source: C. Beierle et al., "Schwaemm and Esch: Lightweight Authenticated
 * Encryption and Hashing using the Sparkle Permutation Family", NIST LWC
 * final-round submission v1.2 (2021), section 2.3 (Esch).
 *
 *   Esch256: SPARKLE384, 7 steps per block, 11 for the last, 256-bit digest
 *   Esch384: SPARKLE512, 8 steps per block, 12 for the last, 384-bit digest
 * both with a 16-byte rate. A block (m0, m1, m2, m3) enters the state
 * through the Feistel map M3: tx = l(m0 ^ m2), ty = l(m1 ^ m3), then
 * x_i ^= m_{2i} ^ ty and y_i ^= m_{2i+1} ^ tx for every branch i of the
 * left half (m_k = 0 beyond the block). The last block is padded with
 * 0x80 0* when shorter than 16 bytes (an empty message is one empty
 * block), and Const_M = 1 << 24 (padded) or 2 << 24 (full) is added to
 * y of the last left-half branch. Output: x0 y0 x1 y1 (16 bytes), then
 * the slim permutation before each further 16 bytes.
 *
 * The last block is processed differently even when full, so the core
 * keeps it buffered (lazy); blocks() only sees blocks that are not last.
 * ctx->s holds the 12 or 16 state words, s[2j] = x_j, s[2j+1] = y_j.
 */
#include "sparkle.h"

#define ESCH_RATE 16
#define ESCH_CONST_M_PADDED (1u << 24)
#define ESCH_CONST_M_FULL (2u << 24)

typedef struct esch_params {
  unsigned branches; /* 6 or 8 */
  unsigned steps_slim;
  unsigned steps_big;
} esch_params;

static const esch_params esch256_params = {6, 7, 11};
static const esch_params esch384_params = {8, 8, 12};

/* M3 on the local state: the left half's branches 0, 1 take the block,
 * every left-half branch takes the Feistel values. */
#define ESCH_INJECT_RATE(in, tx, ty)                                          \
  uint32_t m0 = hq_load32_le(in), m1 = hq_load32_le((in) + 4);                \
  uint32_t m2 = hq_load32_le((in) + 8), m3 = hq_load32_le((in) + 12);         \
  uint32_t tx = SPARKLE_ELL(m0 ^ m2), ty = SPARKLE_ELL(m1 ^ m3);              \
  x0 ^= m0 ^ ty; y0 ^= m1 ^ tx; x1 ^= m2 ^ ty; y1 ^= m3 ^ tx

static void esch256_blocks(hq_ctx *c, const uint8_t *in, size_t n) {
  SPARKLE384_LOAD(c->s.w32);
  for (; n; n--, in += ESCH_RATE) {
    ESCH_INJECT_RATE(in, fx, fy);
    x2 ^= fy; y2 ^= fx;
    /* unrolled: the branch rotation of L_6 becomes register renaming */
#pragma GCC unroll 8
    for (unsigned i = 0; i < esch256_params.steps_slim; i++)
      SPARKLE384_STEP(i);
  }
  SPARKLE384_STORE(c->s.w32);
}

static void esch384_blocks(hq_ctx *c, const uint8_t *in, size_t n) {
  SPARKLE512_LOAD(c->s.w32);
  for (; n; n--, in += ESCH_RATE) {
    ESCH_INJECT_RATE(in, fx, fy);
    x2 ^= fy; y2 ^= fx; x3 ^= fy; y3 ^= fx;
#pragma GCC unroll 8
    for (unsigned i = 0; i < esch384_params.steps_slim; i++)
      SPARKLE512_STEP(i);
  }
  SPARKLE512_STORE(c->s.w32);
}

static void esch_permute(uint32_t *s, const esch_params *p, unsigned steps) {
  if (p->branches == 6) sparkle384(s, steps);
  else sparkle512(s, steps);
}

static void esch_init(hq_ctx *c, const uint8_t *custom, size_t custom_len) {
  (void)custom;
  (void)custom_len;
  memset(c->s.w32, 0, 16 * sizeof(uint32_t));
}

/* A loaded state that has absorbed no block yet (everything still
 * buffered) must be the initial, all-zero one. */
static int esch_check(const hq_ctx *c) {
  if (c->total != c->buffered) return 0;
  for (unsigned i = 0; i < 16; i++)
    if (c->s.w32[i]) return 1;
  return 0;
}

static void esch_final(hq_ctx *c, uint8_t *out, size_t outlen,
                       const esch_params *p) {
  uint32_t *s = c->s.w32;
  unsigned half = p->branches / 2;
  uint8_t block[ESCH_RATE] = {0};
  size_t n = c->buffered; /* 0 only for the empty message */
  memcpy(block, c->buf, n);
  if (n < ESCH_RATE) block[n] = 0x80;
  s[2 * half - 1] ^= n < ESCH_RATE ? ESCH_CONST_M_PADDED : ESCH_CONST_M_FULL;
  uint32_t m[4];
  for (unsigned i = 0; i < 4; i++) m[i] = hq_load32_le(block + 4 * i);
  uint32_t tx = SPARKLE_ELL(m[0] ^ m[2]), ty = SPARKLE_ELL(m[1] ^ m[3]);
  for (unsigned i = 0; i < half; i++) {
    s[2 * i] ^= (i < 2 ? m[2 * i] : 0) ^ ty;
    s[2 * i + 1] ^= (i < 2 ? m[2 * i + 1] : 0) ^ tx;
  }
  esch_permute(s, p, p->steps_big);
  for (;;) {
    uint8_t rate[ESCH_RATE];
    size_t take = outlen < ESCH_RATE ? outlen : ESCH_RATE;
    for (unsigned i = 0; i < 4; i++) hq_store32_le(rate + 4 * i, s[i]);
    memcpy(out, rate, take);
    out += take;
    outlen -= take;
    if (!outlen) break;
    esch_permute(s, p, p->steps_slim);
  }
}

static void esch256_final(hq_ctx *c, uint8_t *out, size_t outlen) {
  esch_final(c, out, outlen, &esch256_params);
}

static void esch384_final(hq_ctx *c, uint8_t *out, size_t outlen) {
  esch_final(c, out, outlen, &esch384_params);
}

static void esch256_select(hq_algo *self, uint32_t cpu) {
  (void)cpu;
  self->blocks = esch256_blocks;
  self->impl = "portable";
}

static void esch384_select(hq_algo *self, uint32_t cpu) {
  (void)cpu;
  self->blocks = esch384_blocks;
  self->impl = "portable";
}

#define ESCH_ALGO(bits, nwords)                                               \
  hq_algo hq_algo_esch##bits = {                                              \
      .info = {.id = HQ_ESCH##bits,                                           \
               .name = "esch" #bits,                                          \
               .digest_len = (bits) / 8,                                      \
               .block_len = ESCH_RATE,                                        \
               .xof = 0,                                                      \
               .customizable = 0,                                             \
               .standard = "NIST LWC final round (Sparkle v2)"},              \
      .word_size = 4,                                                         \
      .state_words = (nwords),                                                \
      .lazy = 1,                                                              \
      .init = esch_init,                                                      \
      .blocks = esch##bits##_blocks,                                          \
      .final = esch##bits##_final,                                            \
      .select = esch##bits##_select,                                          \
      .check = esch_check,                                                    \
      .impl = "portable",                                                     \
  };

ESCH_ALGO(256, 12)
ESCH_ALGO(384, 16)
