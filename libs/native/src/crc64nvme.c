/*
 * CRC-64/NVME (NVM Express NVM Command Set, end-to-end protection; S3's
 * x-amz-checksum-crc64nvme): reflected polynomial 0x9A6C9329AC4BC9B5, init
 * and xorout all ones, check value ("123456789") 0xAE8B14860A799888.
 * The digest is the value big-endian.
 * Portable slice-by-8; carry-less-multiply folding in crc_clmul.c
 * (PCLMULQDQ on x86-64, PMULL on arm64).
 */
#include "crc.h"

#define POLY 0x9A6C9329AC4BC9B5ull

static uint64_t table[8][256];

void hq_crc64nvme_tables(void) {
  for (uint64_t i = 0; i < 256; i++) {
    uint64_t c = i;
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ (POLY & (0ull - (c & 1)));
    table[0][i] = c;
  }
  for (int t = 1; t < 8; t++)
    for (unsigned i = 0; i < 256; i++)
      table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
}

uint64_t hq_crc64nvme_reg(uint64_t reg, const uint8_t *p, size_t n) {
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t x = reg ^ hq_load64_le(p);
    reg = table[7][x & 0xff] ^ table[6][(x >> 8) & 0xff] ^
          table[5][(x >> 16) & 0xff] ^ table[4][(x >> 24) & 0xff] ^
          table[3][(x >> 32) & 0xff] ^ table[2][(x >> 40) & 0xff] ^
          table[1][(x >> 48) & 0xff] ^ table[0][x >> 56];
  }
  while (n--) reg = (reg >> 8) ^ table[0][(reg ^ *p++) & 0xff];
  return reg;
}

static void init(hq_ctx *c, const uint8_t *custom, size_t custom_len) {
  (void)custom;
  (void)custom_len;
  c->s.w64[0] = 0;
}

static void update_portable(hq_ctx *c, const uint8_t *in, size_t n) {
  c->s.w64[0] = ~hq_crc64nvme_reg(~c->s.w64[0], in, n);
}

#if defined(HQ_X86_64) || defined(HQ_ARM64)
static int wide; /* fold in 256-bit registers (select) */

static void update_clmul(hq_ctx *c, const uint8_t *in, size_t n) {
  c->s.w64[0] = ~hq_crc64nvme_reg_clmul(~c->s.w64[0], in, n, wide);
}
#endif

static void final(hq_ctx *c, uint8_t *out, size_t outlen) {
  (void)outlen;
  hq_store64_be(out, c->s.w64[0]);
}

static void select_impl(hq_algo *self, uint32_t cpu) {
  hq_crc64nvme_tables(); /* every path finishes with the tables */
  self->blocks = update_portable;
  self->impl = "portable";
#if defined(HQ_X86_64)
  const uint32_t need = HQ_CPU_X86_PCLMUL | HQ_CPU_X86_SSE41;
  if ((cpu & need) == need) {
    hq_crc_clmul_setup();
    self->blocks = update_clmul;
    wide = hq_crc_clmul_wide(cpu);
    self->impl = wide ? "vpclmul" : "pclmul";
  }
#elif defined(HQ_ARM64)
  if (cpu & HQ_CPU_ARM_PMULL) {
    hq_crc_clmul_setup();
    self->blocks = update_clmul;
    wide = 0;
    self->impl = "pmull";
  }
#else
  (void)cpu;
#endif
}

hq_algo hq_algo_crc64nvme = {
    .info = {.id = HQ_CRC64NVME, .name = "crc64nvme", .digest_len = 8,
             .block_len = 1, .standard = "NVM Express (CRC-64/NVME)"},
    .word_size = 8,
    .state_words = 1,
    .init = init,
    .blocks = update_portable,
    .final = final,
    .select = select_impl,
};
