/*
 * CRC-32C (Castagnoli; iSCSI RFC 3720, S3's x-amz-checksum-crc32c) as a
 * hash algorithm: reflected polynomial 0x82F63B78, init and xorout
 * 0xFFFFFFFF, check value ("123456789") 0xE3069283. The digest is the
 * value big-endian. Paths: portable (hq_crc32c in crc32c.c), the SSE4.2
 * crc32 instruction, and PCLMULQDQ folding finished with either.
 */
#include "crc.h"

#if defined(HQ_X86_64)
#include <immintrin.h>
#endif

static void init(hq_ctx *c, const uint8_t *custom, size_t custom_len) {
  (void)custom;
  (void)custom_len;
  c->s.w32[0] = 0;
}

/* hq_crc32c takes and returns values, as ctx->s holds them. */
static void update_portable(hq_ctx *c, const uint8_t *in, size_t n) {
  c->s.w32[0] = hq_crc32c(c->s.w32[0], in, n);
}

#if defined(HQ_X86_64)
/* Register in, register out: one crc32 instruction per 8 bytes. */
__attribute__((target("sse4.2"))) static uint32_t reg_sse42(
    uint32_t reg, const uint8_t *p, size_t n) {
  uint64_t r = reg;
  for (; n >= 8; p += 8, n -= 8) r = _mm_crc32_u64(r, hq_load64_le(p));
  uint32_t r32 = (uint32_t)r;
  while (n--) r32 = _mm_crc32_u8(r32, *p++);
  return r32;
}

static uint32_t reg_tables(uint32_t reg, const uint8_t *p, size_t n) {
  return ~hq_crc32c(~reg, p, n);
}

static void update_sse42(hq_ctx *c, const uint8_t *in, size_t n) {
  c->s.w32[0] = ~reg_sse42(~c->s.w32[0], in, n);
}

static void update_clmul_sse42(hq_ctx *c, const uint8_t *in, size_t n) {
  c->s.w32[0] = ~hq_crc32c_reg_clmul(~c->s.w32[0], in, n, reg_sse42);
}

static void update_clmul(hq_ctx *c, const uint8_t *in, size_t n) {
  c->s.w32[0] = ~hq_crc32c_reg_clmul(~c->s.w32[0], in, n, reg_tables);
}
#endif

static void final(hq_ctx *c, uint8_t *out, size_t outlen) {
  (void)outlen;
  hq_store32_be(out, c->s.w32[0]);
}

static void select_impl(hq_algo *self, uint32_t cpu) {
  self->blocks = update_portable;
  self->impl = "portable";
#if defined(HQ_X86_64)
  const uint32_t clmul = HQ_CPU_X86_PCLMUL | HQ_CPU_X86_SSE41;
  const int sse42 = (cpu & HQ_CPU_X86_SSE42) != 0;
  if ((cpu & clmul) == clmul) {
    hq_crc_clmul_setup();
    self->blocks = sse42 ? update_clmul_sse42 : update_clmul;
    self->impl = sse42 ? "pclmul+sse4.2" : "pclmul";
  } else if (sse42) {
    self->blocks = update_sse42;
    self->impl = "sse4.2";
  }
#else
  (void)cpu;
#endif
}

hq_algo hq_algo_crc32c = {
    .info = {.id = HQ_CRC32C, .name = "crc32c", .digest_len = 4,
             .block_len = 1, .standard = "RFC 3720 (iSCSI)"},
    .word_size = 4,
    .state_words = 1,
    .init = init,
    .blocks = update_portable,
    .final = final,
    .select = select_impl,
};
