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
 * x86-64 with SSSE3 runs four Alzettes per instruction (see below).
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

#if defined(HQ_X86_64)
/*
 * SSSE3 path: the left half's x words in one register (branch i in 32-bit
 * element i), the left half's y words in another, the same for the right
 * half. SPARKLE384 leaves element 3 zero: Alzette with constant 0 maps
 * (0, 0) to (0, 0), and the Feistel values are masked off there. Four
 * Alzettes run side by side; rotations by 16 and 24 are one pshufb.
 */
#include <tmmintrin.h>

#define ESCH_SSSE3 __attribute__((target("ssse3")))
#define ESCH_V_ROTR(v, n)                                                     \
  _mm_or_si128(_mm_srli_epi32(v, n), _mm_slli_epi32(v, 32 - (n)))

#define ESCH_V_ALZETTE(x, y, c)                                               \
  do {                                                                        \
    x = _mm_add_epi32(x, ESCH_V_ROTR(y, 31));                                 \
    y = _mm_xor_si128(y, _mm_shuffle_epi8(x, rotr24));                        \
    x = _mm_xor_si128(x, c);                                                  \
    x = _mm_add_epi32(x, ESCH_V_ROTR(y, 17));                                 \
    y = _mm_xor_si128(y, ESCH_V_ROTR(x, 17));                                 \
    x = _mm_xor_si128(x, c);                                                  \
    x = _mm_add_epi32(x, y);                                                  \
    y = _mm_xor_si128(y, ESCH_V_ROTR(x, 31));                                 \
    x = _mm_xor_si128(x, c);                                                  \
    x = _mm_add_epi32(x, _mm_shuffle_epi8(y, rotr24));                        \
    y = _mm_xor_si128(y, _mm_shuffle_epi8(x, rotr16));                        \
    x = _mm_xor_si128(x, c);                                                  \
  } while (0)

/* l(xor of all four elements), in every element of the result, times the
 * mask of the half's branches. */
ESCH_SSSE3 static inline __m128i esch_v_feistel(__m128i v, __m128i rotr16,
                                                __m128i half) {
  v = _mm_xor_si128(v, _mm_shuffle_epi32(v, _MM_SHUFFLE(2, 3, 0, 1)));
  v = _mm_xor_si128(v, _mm_shuffle_epi32(v, _MM_SHUFFLE(1, 0, 3, 2)));
  v = _mm_shuffle_epi8(_mm_xor_si128(v, _mm_slli_epi32(v, 16)), rotr16);
  return _mm_and_si128(v, half);
}

/* h = branches per half (3 or 4); inlined with constant h and steps. */
ESCH_SSSE3 static inline __attribute__((always_inline)) void esch_blocks_v(
    hq_ctx *c, const uint8_t *in, size_t n, const unsigned h,
    const unsigned steps) {
  const __m128i rotr16 =
      _mm_setr_epi8(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
  const __m128i rotr24 =
      _mm_setr_epi8(3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14);
  const __m128i half = _mm_setr_epi32(-1, -1, -1, h == 4 ? -1 : 0);
  const __m128i low2 = _mm_setr_epi32(-1, -1, 0, 0);
  const __m128i cl = _mm_setr_epi32(
      (int)SPARKLE_C0, (int)SPARKLE_C1, (int)SPARKLE_C2,
      h == 4 ? (int)SPARKLE_C3 : 0);
  const __m128i cr = h == 4 ? _mm_setr_epi32((int)SPARKLE_C4,
                                             (int)SPARKLE_C5,
                                             (int)SPARKLE_C6, (int)SPARKLE_C7)
                            : _mm_setr_epi32((int)SPARKLE_C3,
                                             (int)SPARKLE_C4,
                                             (int)SPARKLE_C5, 0);
  uint32_t w[16] = {0}, *s = c->s.w32;
  memcpy(w, s, 4 * 4 * h);
  __m128i xl = _mm_setr_epi32((int)w[0], (int)w[2], (int)w[4], (int)w[6]);
  __m128i yl = _mm_setr_epi32((int)w[1], (int)w[3], (int)w[5], (int)w[7]);
  const uint32_t *r = w + 2 * h;
  __m128i xr = _mm_setr_epi32((int)r[0], (int)r[2], (int)r[4],
                              h == 4 ? (int)r[6] : 0);
  __m128i yr = _mm_setr_epi32((int)r[1], (int)r[3], (int)r[5],
                              h == 4 ? (int)r[7] : 0);
  if (h == 3) {
    xl = _mm_and_si128(xl, half);
    yl = _mm_and_si128(yl, half);
  }
  for (; n; n--, in += ESCH_RATE) {
    __m128i m = _mm_loadu_si128((const __m128i *)(const void *)in);
    __m128i xm = _mm_and_si128(_mm_shuffle_epi32(m, _MM_SHUFFLE(3, 3, 2, 0)),
                               low2); /* m0 m2 */
    __m128i ym = _mm_and_si128(_mm_shuffle_epi32(m, _MM_SHUFFLE(3, 3, 3, 1)),
                               low2); /* m1 m3 */
    __m128i tx = esch_v_feistel(xm, rotr16, half);
    __m128i ty = esch_v_feistel(ym, rotr16, half);
    xl = _mm_xor_si128(xl, _mm_xor_si128(xm, ty));
    yl = _mm_xor_si128(yl, _mm_xor_si128(ym, tx));
    for (unsigned i = 0; i < steps; i++) {
      __m128i step = _mm_setr_epi32((int)sparkle_rcon[i & 7], (int)i, 0, 0);
      yl = _mm_xor_si128(yl, step);
      ESCH_V_ALZETTE(xl, yl, cl);
      ESCH_V_ALZETTE(xr, yr, cr);
      /* L: u = right ^ left ^ Feistel value; the new left half is u with
       * its branches rotated by one, the new right half the old left. */
      __m128i fx = esch_v_feistel(xl, rotr16, half);
      __m128i fy = esch_v_feistel(yl, rotr16, half);
      __m128i ux = _mm_xor_si128(_mm_xor_si128(xr, xl), fy);
      __m128i uy = _mm_xor_si128(_mm_xor_si128(yr, yl), fx);
      xr = xl;
      yr = yl;
      if (h == 4) {
        xl = _mm_shuffle_epi32(ux, _MM_SHUFFLE(0, 3, 2, 1));
        yl = _mm_shuffle_epi32(uy, _MM_SHUFFLE(0, 3, 2, 1));
      } else {
        xl = _mm_shuffle_epi32(ux, _MM_SHUFFLE(3, 0, 2, 1));
        yl = _mm_shuffle_epi32(uy, _MM_SHUFFLE(3, 0, 2, 1));
      }
    }
  }
  uint32_t v[4][4];
  _mm_storeu_si128((__m128i *)(void *)v[0], xl);
  _mm_storeu_si128((__m128i *)(void *)v[1], yl);
  _mm_storeu_si128((__m128i *)(void *)v[2], xr);
  _mm_storeu_si128((__m128i *)(void *)v[3], yr);
  for (unsigned i = 0; i < h; i++) {
    s[2 * i] = v[0][i];
    s[2 * i + 1] = v[1][i];
    s[2 * (h + i)] = v[2][i];
    s[2 * (h + i) + 1] = v[3][i];
  }
}

ESCH_SSSE3 static void esch256_blocks_ssse3(hq_ctx *c, const uint8_t *in,
                                            size_t n) {
  esch_blocks_v(c, in, n, 3, esch256_params.steps_slim);
}

ESCH_SSSE3 static void esch384_blocks_ssse3(hq_ctx *c, const uint8_t *in,
                                            size_t n) {
  esch_blocks_v(c, in, n, 4, esch384_params.steps_slim);
}
#endif

static void esch256_select(hq_algo *self, uint32_t cpu) {
  self->blocks = esch256_blocks;
  self->impl = "portable";
#if defined(HQ_X86_64)
  if (cpu & HQ_CPU_X86_SSSE3) {
    self->blocks = esch256_blocks_ssse3;
    self->impl = "ssse3";
  }
#else
  (void)cpu;
#endif
}

static void esch384_select(hq_algo *self, uint32_t cpu) {
  self->blocks = esch384_blocks;
  self->impl = "portable";
#if defined(HQ_X86_64)
  if (cpu & HQ_CPU_X86_SSSE3) {
    self->blocks = esch384_blocks_ssse3;
    self->impl = "ssse3";
  }
#else
  (void)cpu;
#endif
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
