/*
 * The SHA-256 and SHA-512 block functions of the riscv64 builds with Zbb
 * (sha2_zbb.c) and Zknh (sha2_zknh.c): message words read with one load
 * and a rev8 byte swap where the input is 8-byte aligned (byte loads
 * otherwise: rv64gc promises no fast misaligned loads). The includer may
 * define the Sigma/sigma macros of sha256_rounds.h and sha512_rounds.h (or
 * leave the rotations to the compiler) and defines SHA2_RV(f), the public
 * name of each function.
 */
#include "internal.h"

#if defined(HQ_RISCV64)
static inline uint32_t load32_be_aligned(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, __builtin_assume_aligned(p, 4), 4);
  return __builtin_bswap32(v);
}
#define SHA256_LOAD(p, aligned) ((aligned) ? load32_be_aligned(p) : hq_load32_be(p))
#define SHA512_LOAD(p, aligned) \
  ((aligned) ? __builtin_bswap64(hq_load64_le_aligned(p)) : hq_load64_be(p))
#include "sha256_rounds.h"
#include "sha512_rounds.h"

void SHA2_RV(sha256_blocks)(hq_ctx *c, const uint8_t *in, size_t n) {
  if (hq_aligned8(in)) sha256_compress(c->s.w32, in, n, 1);
  else sha256_compress(c->s.w32, in, n, 0);
}

void SHA2_RV(sha512_blocks)(hq_ctx *c, const uint8_t *in, size_t n) {
  if (hq_aligned8(in)) sha512_compress(c->s.w64, in, n, 1);
  else sha512_compress(c->s.w64, in, n, 0);
}
#endif
