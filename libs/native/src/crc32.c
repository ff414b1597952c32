/*
 * CRC-32/ISO-HDLC, the CRC of zlib, gzip, PNG and S3's x-amz-checksum-crc32:
 * reflected polynomial 0xEDB88320, init and xorout 0xFFFFFFFF, check value
 * ("123456789") 0xCBF43926. The digest is the value big-endian.
 * Portable slice-by-8; PCLMULQDQ folding in crc_clmul.c.
 */
#include "crc.h"

#define POLY 0xEDB88320u

static uint32_t table[8][256];

void hq_crc32_tables(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ (POLY & (0u - (c & 1)));
    table[0][i] = c;
  }
  for (int t = 1; t < 8; t++)
    for (uint32_t i = 0; i < 256; i++)
      table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
}

uint32_t hq_crc32_reg(uint32_t reg, const uint8_t *p, size_t n) {
  for (; n >= 8; p += 8, n -= 8) {
    uint32_t lo = reg ^ hq_load32_le(p), hi = hq_load32_le(p + 4);
    reg = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^
          table[5][(lo >> 16) & 0xff] ^ table[4][lo >> 24] ^
          table[3][hi & 0xff] ^ table[2][(hi >> 8) & 0xff] ^
          table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
  }
  while (n--) reg = (reg >> 8) ^ table[0][(reg ^ *p++) & 0xff];
  return reg;
}

static void init(hq_ctx *c, const uint8_t *custom, size_t custom_len) {
  (void)custom;
  (void)custom_len;
  c->s.w32[0] = 0;
}

static void update_portable(hq_ctx *c, const uint8_t *in, size_t n) {
  c->s.w32[0] = ~hq_crc32_reg(~c->s.w32[0], in, n);
}

#if defined(HQ_X86_64)
static void update_clmul(hq_ctx *c, const uint8_t *in, size_t n) {
  c->s.w32[0] = ~hq_crc32_reg_clmul(~c->s.w32[0], in, n);
}
#endif

static void final(hq_ctx *c, uint8_t *out, size_t outlen) {
  (void)outlen;
  hq_store32_be(out, c->s.w32[0]);
}

static void select_impl(hq_algo *self, uint32_t cpu) {
  hq_crc32_tables(); /* every path finishes with the tables */
  self->blocks = update_portable;
  self->impl = "portable";
#if defined(HQ_X86_64)
  const uint32_t need = HQ_CPU_X86_PCLMUL | HQ_CPU_X86_SSE41;
  if ((cpu & need) == need) {
    hq_crc_clmul_setup();
    self->blocks = update_clmul;
    self->impl = "pclmul";
  }
#else
  (void)cpu;
#endif
}

hq_algo hq_algo_crc32 = {
    .info = {.id = HQ_CRC32, .name = "crc32", .digest_len = 4, .block_len = 1,
             .standard = "ISO-HDLC (zlib)"},
    .word_size = 4,
    .state_words = 1,
    .init = init,
    .blocks = update_portable,
    .final = final,
    .select = select_impl,
};
