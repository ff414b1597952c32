/*
 * Xoodyak in hash mode: Cyclist(K = empty) with Xoodoo[12], absorb and
 * squeeze rate Rhash = 16 bytes, 32-byte digest (Absorb(M), Squeeze(32)).
 * Source: "Xoodyak, a lightweight cryptographic scheme", NIST LWC
 * final-round submission (2021), Algorithms 1 and 2 (Cyclist).
 *
 * In hash mode Cyclist's Up(Cu) is just the permutation (Cu is ignored)
 * and Down(X, Cd) adds X || 0x01 || 0* and, for the first block only,
 * Cd & 1 = 1 into the last state byte. Absorb(M) is Down(M_1, 3), then
 * Up, Down(M_i, 0) for each further block; Squeeze then starts with Up.
 * So the whole hash is: state = 0, last byte ^= 1 (the first block's Cd,
 * added at init since addition commutes), then for every block (at least
 * one, possibly empty) add block || 0x01 and permute; output 16 bytes,
 * add 0x01 to byte 0 (Down(empty, 0)), permute, output 16 bytes.
 * No phase flag is needed: ctx->s holds the 12 lanes only.
 * x86-64 with SSSE3 gets a one-plane-per-register path (below).
 *
 * Every block is followed by a permutation, but the last block may be
 * full (a 16-byte message is one block, not two), so the core keeps it
 * buffered (lazy) and final() absorbs it.
 */
#include "xoodoo.h"

#define XOODYAK_RATE 16

static void xoodyak_init(hq_ctx *c, const uint8_t *custom, size_t custom_len) {
  (void)custom;
  (void)custom_len;
  memset(c->s.w32, 0, 12 * sizeof(uint32_t));
  c->s.w32[11] = 0x01000000u; /* Cd & 1 of the first Down, in byte 47 */
}

/* A loaded state that has absorbed no block yet (everything still
 * buffered) must be the initial one. */
static int xoodyak_check(const hq_ctx *c) {
  hq_ctx fresh;
  if (c->total != c->buffered) return 0;
  xoodyak_init(&fresh, NULL, 0);
  return memcmp(fresh.s.w32, c->s.w32, 12 * sizeof(uint32_t)) != 0;
}

static void xoodyak_blocks(hq_ctx *c, const uint8_t *in, size_t n) {
  XOODOO_LOAD(c->s.w32);
  for (; n; n--, in += XOODYAK_RATE) {
    XOODOO_ADD_RATE16(in);
    XOODOO_ADD_LANE4(0x01); /* padding: byte 16 of a full block */
    XOODOO_PERMUTE();
  }
  XOODOO_STORE(c->s.w32);
}

static void xoodyak_final(hq_ctx *c, uint8_t *out, size_t outlen) {
  uint32_t *s = c->s.w32;
  uint8_t block[XOODYAK_RATE + 4] = {0};
  size_t n = c->buffered; /* 0 only for the empty message */
  memcpy(block, c->buf, n);
  block[n] = 0x01;
  for (unsigned i = 0; i < 5; i++) s[i] ^= hq_load32_le(block + 4 * i);
  xoodoo_permute(s);
  for (;;) {
    uint8_t lanes[XOODYAK_RATE];
    size_t take = outlen < XOODYAK_RATE ? outlen : XOODYAK_RATE;
    for (unsigned i = 0; i < 4; i++) hq_store32_le(lanes + 4 * i, s[i]);
    memcpy(out, lanes, take);
    out += take;
    outlen -= take;
    if (!outlen) break;
    s[0] ^= 0x01; /* Down(empty, 0) before the next Up */
    xoodoo_permute(s);
  }
}

#if defined(HQ_X86_64)
/*
 * SSSE3 path: one plane per 128-bit register (lane x in 32-bit element x,
 * which is the memory layout of ctx->s on a little-endian host). Lane
 * shifts are pshufd; rho-east's plane-2 shift by two lanes and rotation by
 * 8 are one pshufb. SSE has no rotate, so other rotations are two shifts
 * and an or.
 */
#include <tmmintrin.h>

#define XOODYAK_SSSE3 __attribute__((target("ssse3")))
#define XOODOO_V_ROTL(v, n)                                                   \
  _mm_or_si128(_mm_slli_epi32(v, n), _mm_srli_epi32(v, 32 - (n)))
/* Result lane x = source lane x - 1 (plane <<< (1, 0)). */
#define XOODOO_V_SHIFT1(v) _mm_shuffle_epi32(v, _MM_SHUFFLE(2, 1, 0, 3))

#define XOODOO_V_ROUND(rc)                                                    \
  do {                                                                        \
    __m128i p = XOODOO_V_SHIFT1(_mm_xor_si128(_mm_xor_si128(p0, p1), p2));    \
    __m128i e = _mm_xor_si128(XOODOO_V_ROTL(p, 5), XOODOO_V_ROTL(p, 14));     \
    p0 = _mm_xor_si128(_mm_xor_si128(p0, e), _mm_cvtsi32_si128((int)(rc)));   \
    p1 = XOODOO_V_SHIFT1(_mm_xor_si128(p1, e));                               \
    p2 = _mm_xor_si128(p2, e);                                                \
    p2 = XOODOO_V_ROTL(p2, 11);                                               \
    __m128i b0 = _mm_andnot_si128(p1, p2), b1 = _mm_andnot_si128(p2, p0);     \
    __m128i b2 = _mm_andnot_si128(p0, p1);                                    \
    p0 = _mm_xor_si128(p0, b0);                                               \
    p1 = XOODOO_V_ROTL(_mm_xor_si128(p1, b1), 1);                             \
    p2 = _mm_shuffle_epi8(_mm_xor_si128(p2, b2), rho_east2);                  \
  } while (0)

XOODYAK_SSSE3 static void xoodyak_blocks_ssse3(hq_ctx *c, const uint8_t *in,
                                               size_t n) {
  /* byte indices: lane x <- lane x - 2 rotated left by 8 */
  const __m128i rho_east2 =
      _mm_setr_epi8(11, 8, 9, 10, 15, 12, 13, 14, 3, 0, 1, 2, 7, 4, 5, 6);
  const __m128i pad = _mm_cvtsi32_si128(0x01);
  __m128i p0 = _mm_loadu_si128((const __m128i *)(const void *)&c->s.w32[0]);
  __m128i p1 = _mm_loadu_si128((const __m128i *)(const void *)&c->s.w32[4]);
  __m128i p2 = _mm_loadu_si128((const __m128i *)(const void *)&c->s.w32[8]);
  for (; n; n--, in += XOODYAK_RATE) {
    p0 = _mm_xor_si128(p0, _mm_loadu_si128((const __m128i *)(const void *)in));
    p1 = _mm_xor_si128(p1, pad);
    XOODOO_ROUNDS(XOODOO_V_ROUND);
  }
  _mm_storeu_si128((__m128i *)(void *)&c->s.w32[0], p0);
  _mm_storeu_si128((__m128i *)(void *)&c->s.w32[4], p1);
  _mm_storeu_si128((__m128i *)(void *)&c->s.w32[8], p2);
}
#endif

static void xoodyak_select(hq_algo *self, uint32_t cpu) {
  self->blocks = xoodyak_blocks;
  self->impl = "portable";
#if defined(HQ_X86_64)
  if (cpu & HQ_CPU_X86_SSSE3) {
    self->blocks = xoodyak_blocks_ssse3;
    self->impl = "ssse3";
  }
#else
  (void)cpu;
#endif
}

hq_algo hq_algo_xoodyak = {
    .info = {.id = HQ_XOODYAK,
             .name = "xoodyak",
             .digest_len = 32,
             .block_len = XOODYAK_RATE,
             .xof = 0,
             .customizable = 0,
             .standard = "NIST LWC final round (Xoodyak)"},
    .word_size = 4,
    .state_words = 12,
    .lazy = 1,
    .init = xoodyak_init,
    .blocks = xoodyak_blocks,
    .final = xoodyak_final,
    .select = xoodyak_select,
    .check = xoodyak_check,
    .impl = "portable",
};
