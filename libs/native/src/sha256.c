/*
 * SHA-224 and SHA-256 (FIPS 180-4 §6.2, §6.3): the portable block function
 * (its rounds in sha256_rounds.h), init, padding, and the choice of block
 * function (SHA-NI in sha256_shani.c, ARMv8 SHA2 in sha256_armv8.c, riscv64
 * Zbb and Zknh in sha2_zbb.c, sha2_zknh.c).
 *
 * State: H0..H7 as host integers in c->s.w32[0..7]. The legacy loader in
 * state.c and the serialized format rely on this layout.
 */
#include "sha256_rounds.h"

/* FIPS 180-4 §4.2.2: the first 32 bits of the fractional parts of the cube
 * roots of the first 64 primes. */
const uint32_t hq_sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static void sha256_blocks_portable(hq_ctx *ctx, const uint8_t *in, size_t n) {
  sha256_compress(ctx->s.w32, in, n, 0);
}

/* FIPS 180-4 §5.3.2 and §5.3.3. */
static const uint32_t IV224[8] = {0xc1059ed8, 0x367cd507, 0x3070dd17,
                                  0xf70e5939, 0xffc00b31, 0x68581511,
                                  0x64f98fa7, 0xbefa4fa4};
static const uint32_t IV256[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372,
                                  0xa54ff53a, 0x510e527f, 0x9b05688c,
                                  0x1f83d9ab, 0x5be0cd19};

static void init224(hq_ctx *c, const uint8_t *custom, size_t custom_len) {
  (void)custom, (void)custom_len;
  memcpy(c->s.w32, IV224, sizeof IV224);
}

static void init256(hq_ctx *c, const uint8_t *custom, size_t custom_len) {
  (void)custom, (void)custom_len;
  memcpy(c->s.w32, IV256, sizeof IV256);
}

/* §5.1.1: 0x80, zeros, then the 64-bit big-endian bit length, through the
 * dispatched block function. */
static void sha256_pad(hq_ctx *c) {
  uint8_t last[128] = {0};
  size_t n = c->buffered;
  memcpy(last, c->buf, n);
  last[n] = 0x80;
  size_t len = n < 56 ? 64 : 128;
  hq_store64_be(last + len - 8, c->total << 3);
  hq_algo_by_id((int)c->algo)->blocks(c, last, len / 64);
  memset(last, 0, sizeof last);
}

/* outlen is the digest length: 28 (SHA-224, H0..H6) or 32. */
static void sha256_final(hq_ctx *c, uint8_t *out, size_t outlen) {
  sha256_pad(c);
  for (size_t i = 0; i < outlen / 4; i++)
    hq_store32_be(out + 4 * i, c->s.w32[i]);
}

static void sha256_select(hq_algo *self, uint32_t cpu) {
  self->blocks = sha256_blocks_portable;
  self->blocks2 = NULL;
  self->impl = "portable";
#if defined(HQ_X86_64)
  const uint32_t ni = HQ_CPU_X86_SHA | HQ_CPU_X86_SSE41 | HQ_CPU_X86_SSSE3;
  if ((cpu & ni) == ni) {
    self->blocks = hq_sha256_blocks_shani;
    self->blocks2 = hq_sha256_blocks2_shani;
    self->impl = "sha-ni";
  }
#elif defined(HQ_ARM64)
  if (cpu & HQ_CPU_ARM_SHA2) {
    self->blocks = hq_sha256_blocks_armv8;
    self->impl = "armv8-sha2";
  }
#elif defined(HQ_RISCV64)
  const uint32_t zknh = HQ_CPU_RV_ZKNH | HQ_CPU_RV_ZBB;
  if ((cpu & zknh) == zknh) {
    self->blocks = hq_sha256_blocks_zknh;
    self->impl = "zknh";
  } else if (cpu & HQ_CPU_RV_ZBB) {
    self->blocks = hq_sha256_blocks_zbb;
    self->impl = "zbb";
  }
#else
  (void)cpu;
#endif
}

hq_algo hq_algo_sha224 = {
    .info = {HQ_SHA224, "sha224", 28, 64, 0, 0, "FIPS 180-4"},
    .word_size = 4, .state_words = 8,
    .init = init224, .blocks = sha256_blocks_portable, .final = sha256_final,
    .select = sha256_select, .impl = "portable"};

hq_algo hq_algo_sha256 = {
    .info = {HQ_SHA256, "sha256", 32, 64, 0, 0, "FIPS 180-4"},
    .word_size = 4, .state_words = 8,
    .init = init256, .blocks = sha256_blocks_portable, .final = sha256_final,
    .select = sha256_select, .impl = "portable"};
