/*
 * CRC-32C (Castagnoli; iSCSI RFC 3720, S3's x-amz-checksum-crc32c) as a
 * hash algorithm: reflected polynomial 0x82F63B78, init and xorout
 * 0xFFFFFFFF, check value ("123456789") 0xE3069283. The digest is the
 * value big-endian. Paths: portable (hq_crc32c in crc32c.c), the CRC
 * instructions (SSE4.2 crc32, ARMv8 crc32c), and carry-less-multiply
 * folding (crc_clmul.c) finished with either.
 */
#include "crc.h"

#if defined(HQ_X86_64)
#include <immintrin.h>
#elif defined(HQ_ARM64)
#include <arm_acle.h>
#endif

static void init(hq_ctx *c, const uint8_t *custom, size_t custom_len) {
  (void)custom;
  (void)custom_len;
  c->s.w32[0] = 0;
}

/* hq_crc32c takes and returns values; the register is their complement. */
static uint32_t reg_tables(uint32_t reg, const uint8_t *p, size_t n) {
  return ~hq_crc32c(~reg, p, n);
}

#if defined(HQ_X86_64)
__attribute__((target("sse4.2"))) static uint32_t reg_instr(
    uint32_t reg, const uint8_t *p, size_t n) {
  uint64_t r = reg;
  for (; n >= 8; p += 8, n -= 8) r = _mm_crc32_u64(r, hq_load64_le(p));
  uint32_t r32 = (uint32_t)r;
  while (n--) r32 = _mm_crc32_u8(r32, *p++);
  return r32;
}
#define INSTR_FEATURE HQ_CPU_X86_SSE42
#define INSTR_NAME "sse4.2"
#define CLMUL_FEATURES (HQ_CPU_X86_PCLMUL | HQ_CPU_X86_SSE41)
#define CLMUL_NAME "pclmul"
#elif defined(HQ_ARM64)
__attribute__((target("+crc"))) static uint32_t reg_instr(
    uint32_t reg, const uint8_t *p, size_t n) {
  for (; n >= 8; p += 8, n -= 8) reg = __crc32cd(reg, hq_load64_le(p));
  while (n--) reg = __crc32cb(reg, *p++);
  return reg;
}
#define INSTR_FEATURE HQ_CPU_ARM_CRC32
#define INSTR_NAME "armv8-crc"
#define CLMUL_FEATURES HQ_CPU_ARM_PMULL
#define CLMUL_NAME "pmull"
#endif

/* What select() chose: tables or CRC instructions to finish with, and
 * whether to fold in 256-bit registers. */
static hq_crc32_fn reg_fn = reg_tables;
static int wide;

static void update(hq_ctx *c, const uint8_t *in, size_t n) {
  c->s.w32[0] = ~reg_fn(~c->s.w32[0], in, n);
}

#if defined(CLMUL_FEATURES)
static void update_clmul(hq_ctx *c, const uint8_t *in, size_t n) {
  c->s.w32[0] = ~hq_crc32c_reg_clmul(~c->s.w32[0], in, n, reg_fn, wide);
}
#endif

/* The serialized state's checksum (state.c): short inputs, so the CRC
 * instruction where select() found one, else the tables. */
uint32_t hq_crc32c_short(uint32_t crc, const uint8_t *p, size_t n) {
  return ~reg_fn(~crc, p, n);
}

static void final(hq_ctx *c, uint8_t *out, size_t outlen) {
  (void)outlen;
  hq_store32_be(out, c->s.w32[0]);
}

static void select_impl(hq_algo *self, uint32_t cpu) {
  reg_fn = reg_tables;
  wide = 0;
  self->blocks = update;
  self->impl = "portable";
#if defined(CLMUL_FEATURES)
  const int instr = (cpu & INSTR_FEATURE) != 0;
  if (instr) {
    reg_fn = reg_instr;
    self->impl = INSTR_NAME;
  }
  if ((cpu & CLMUL_FEATURES) == CLMUL_FEATURES) {
    hq_crc_clmul_setup();
    self->blocks = update_clmul;
    self->impl = instr ? CLMUL_NAME "+" INSTR_NAME : CLMUL_NAME;
    wide = hq_crc_clmul_wide(cpu); /* x86-64 only */
    if (wide) self->impl = instr ? "vpclmul+" INSTR_NAME : "vpclmul";
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
    .blocks = update,
    .final = final,
    .select = select_impl,
};
