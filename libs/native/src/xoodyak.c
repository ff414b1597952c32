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

static void xoodyak_select(hq_algo *self, uint32_t cpu) {
  (void)cpu;
  self->blocks = xoodyak_blocks;
  self->impl = "portable";
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
    .check = NULL,
    .impl = "portable",
};
