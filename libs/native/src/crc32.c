/*
 * CRC-32/ISO-HDLC, the CRC of zlib, gzip, PNG and S3's x-amz-checksum-crc32:
 * reflected polynomial 0xEDB88320, init and xorout 0xFFFFFFFF, check value
 * ("123456789") 0xCBF43926. The digest is the value big-endian.
 * Portable slice-by-8, the ARMv8 CRC32 instructions, and carry-less-
 * multiply folding (crc_clmul.c: PCLMULQDQ, PMULL) finished with either.
 */
#include "crc.h"

#if defined(HQ_ARM64)
#include <arm_acle.h>
#endif

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

#if defined(HQ_ARM64)
__attribute__((target("+crc"))) static uint32_t reg_armv8(
    uint32_t reg, const uint8_t *p, size_t n) {
  for (; n >= 8; p += 8, n -= 8) reg = __crc32d(reg, hq_load64_le(p));
  while (n--) reg = __crc32b(reg, *p++);
  return reg;
}
#endif

/* What select() chose: tables or CRC instructions to finish with, and
 * whether to fold in 256-bit registers. */
static hq_crc32_fn reg_fn = hq_crc32_reg;
static int wide;

static void update(hq_ctx *c, const uint8_t *in, size_t n) {
  c->s.w32[0] = ~reg_fn(~c->s.w32[0], in, n);
}

#if defined(HQ_X86_64) || defined(HQ_ARM64)
static void update_clmul(hq_ctx *c, const uint8_t *in, size_t n) {
  c->s.w32[0] = ~hq_crc32_reg_clmul(~c->s.w32[0], in, n, reg_fn, wide);
}
#endif

static void final(hq_ctx *c, uint8_t *out, size_t outlen) {
  (void)outlen;
  hq_store32_be(out, c->s.w32[0]);
}

static void select_impl(hq_algo *self, uint32_t cpu) {
  hq_crc32_tables(); /* every path may finish with the tables */
  reg_fn = hq_crc32_reg;
  wide = 0;
  self->blocks = update;
  self->impl = "portable";
#if defined(HQ_X86_64)
  const uint32_t clmul = HQ_CPU_X86_PCLMUL | HQ_CPU_X86_SSE41;
  if ((cpu & clmul) == clmul) {
    hq_crc_clmul_setup();
    self->blocks = update_clmul;
    wide = hq_crc_clmul_wide(cpu);
    self->impl = wide ? "vpclmul" : "pclmul";
  }
#elif defined(HQ_ARM64)
  const int crc = (cpu & HQ_CPU_ARM_CRC32) != 0;
  if (crc) {
    reg_fn = reg_armv8;
    self->impl = "armv8-crc";
  }
  if (cpu & HQ_CPU_ARM_PMULL) {
    hq_crc_clmul_setup();
    self->blocks = update_clmul;
    self->impl = crc ? "pmull+armv8-crc" : "pmull";
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
    .blocks = update,
    .final = final,
    .select = select_impl,
};
