/*
 * SHA-1 (FIPS 180-4 §6.1): portable compression, init, padding, and the
 * choice of block function (SHA-NI in sha1_shani.c, ARMv8 SHA1 in
 * sha1_armv8.c).
 *
 * State: H0..H4 as host integers in c->s.w32[0..4]. The legacy loader in
 * state.c and the serialized format rely on this layout.
 */
#include "internal.h"

/* W is a 16-word ring (FIPS 180-4 §6.1.3 alternate method); the five
 * working variables rotate by renaming. */
#define W(t) w[(t) & 15]
#define LOADW(t) (W(t) = hq_load32_be(in + 4 * (t)))
#define EXPAND(t) \
  (W(t) = hq_rotl32(W((t) - 3) ^ W((t) - 8) ^ W((t) - 14) ^ W(t), 1))
#define F0(b, c, d) ((d) ^ ((b) & ((c) ^ (d))))
#define F1(b, c, d) ((b) ^ (c) ^ (d))
#define F2(b, c, d) (((b) & (c)) | ((d) & ((b) | (c))))
#define ROUND(a, b, c, d, e, f, k, wt)                  \
  do {                                                  \
    e += hq_rotl32(a, 5) + f(b, c, d) + (k) + (wt);     \
    b = hq_rotl32(b, 30);                               \
  } while (0)
#define ROUND5(t, f, k, wexpr)                         \
  ROUND(a, b, c, d, e, f, k, wexpr((t) + 0));          \
  ROUND(e, a, b, c, d, f, k, wexpr((t) + 1));          \
  ROUND(d, e, a, b, c, f, k, wexpr((t) + 2));          \
  ROUND(c, d, e, a, b, f, k, wexpr((t) + 3));          \
  ROUND(b, c, d, e, a, f, k, wexpr((t) + 4))
#define ROUND20(t, f, k)                   \
  ROUND5((t) + 0, f, k, EXPAND);           \
  ROUND5((t) + 5, f, k, EXPAND);           \
  ROUND5((t) + 10, f, k, EXPAND);          \
  ROUND5((t) + 15, f, k, EXPAND)

/* §4.2.1 */
#define K0 0x5a827999u
#define K1 0x6ed9eba1u
#define K2 0x8f1bbcdcu
#define K3 0xca62c1d6u

static void sha1_blocks_portable(hq_ctx *ctx, const uint8_t *in, size_t n) {
  uint32_t *s = ctx->s.w32;
  for (; n--; in += 64) {
    uint32_t w[16];
    uint32_t a = s[0], b = s[1], c = s[2], d = s[3], e = s[4];
    ROUND5(0, F0, K0, LOADW);
    ROUND5(5, F0, K0, LOADW);
    ROUND5(10, F0, K0, LOADW);
    ROUND(a, b, c, d, e, F0, K0, LOADW(15));
    ROUND(e, a, b, c, d, F0, K0, EXPAND(16));
    ROUND(d, e, a, b, c, F0, K0, EXPAND(17));
    ROUND(c, d, e, a, b, F0, K0, EXPAND(18));
    ROUND(b, c, d, e, a, F0, K0, EXPAND(19));
    ROUND20(20, F1, K1);
    ROUND20(40, F2, K2);
    ROUND20(60, F1, K3);
    s[0] += a; s[1] += b; s[2] += c; s[3] += d; s[4] += e;
  }
}

/* §5.3.1 */
static void sha1_init(hq_ctx *c, const uint8_t *custom, size_t custom_len) {
  static const uint32_t iv[5] = {0x67452301, 0xefcdab89, 0x98badcfe,
                                 0x10325476, 0xc3d2e1f0};
  (void)custom, (void)custom_len;
  memcpy(c->s.w32, iv, sizeof iv);
}

/* §5.1.1: 0x80, zeros, the 64-bit big-endian bit length, through the
 * dispatched block function. */
static void sha1_final(hq_ctx *c, uint8_t *out, size_t outlen) {
  uint8_t last[128] = {0};
  size_t n = c->buffered;
  memcpy(last, c->buf, n);
  last[n] = 0x80;
  size_t len = n < 56 ? 64 : 128;
  hq_store64_be(last + len - 8, c->total << 3);
  hq_algo_by_id(HQ_SHA1)->blocks(c, last, len / 64);
  memset(last, 0, sizeof last);
  for (size_t i = 0; i < outlen / 4; i++)
    hq_store32_be(out + 4 * i, c->s.w32[i]);
}

static void sha1_select(hq_algo *self, uint32_t cpu) {
  self->blocks = sha1_blocks_portable;
  self->blocks2 = NULL;
  self->impl = "portable";
#if defined(HQ_X86_64)
  const uint32_t ni = HQ_CPU_X86_SHA | HQ_CPU_X86_SSE41 | HQ_CPU_X86_SSSE3;
  if ((cpu & ni) == ni) {
    self->blocks = hq_sha1_blocks_shani;
    self->blocks2 = hq_sha1_blocks2_shani;
    self->impl = "sha-ni";
  }
#elif defined(HQ_ARM64)
  if (cpu & HQ_CPU_ARM_SHA1) {
    self->blocks = hq_sha1_blocks_armv8;
    self->impl = "armv8-sha1";
  }
#else
  (void)cpu;
#endif
}

hq_algo hq_algo_sha1 = {
    .info = {HQ_SHA1, "sha1", 20, 64, 0, 0, "FIPS 180-4"},
    .word_size = 4, .state_words = 5,
    .init = sha1_init, .blocks = sha1_blocks_portable, .final = sha1_final,
    .select = sha1_select, .impl = "portable"};
