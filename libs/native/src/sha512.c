/*
 * SHA-384 and SHA-512 (FIPS 180-4 §6.4, §6.5): compression, init, padding,
 * and the choice of block function.
 *
 * State: H0..H7 as host integers in c->s.w64[0..7]. The serialized format
 * relies on this layout.
 *
 * The portable block function keeps the message schedule in a 16-word ring
 * and runs in chunks of 16 unrolled rounds; x86-64 CPUs with AVX2 and BMI2
 * get sha512_avx2.c (vector message schedule, RORX rotations), in its
 * AVX-512VL form (vector rotations) where the CPU and OS have AVX-512.
 */
#include "sha512_rounds.h"

#if defined(HQ_X86_64)
#include <emmintrin.h>
#endif

/* FIPS 180-4 §4.2.3: the first 64 bits of the fractional parts of the cube
 * roots of the first 80 primes. */
const uint64_t hq_sha512_k[80] = {
    0x428a2f98d728ae22, 0x7137449123ef65cd, 0xb5c0fbcfec4d3b2f,
    0xe9b5dba58189dbbc, 0x3956c25bf348b538, 0x59f111f1b605d019,
    0x923f82a4af194f9b, 0xab1c5ed5da6d8118, 0xd807aa98a3030242,
    0x12835b0145706fbe, 0x243185be4ee4b28c, 0x550c7dc3d5ffb4e2,
    0x72be5d74f27b896f, 0x80deb1fe3b1696b1, 0x9bdc06a725c71235,
    0xc19bf174cf692694, 0xe49b69c19ef14ad2, 0xefbe4786384f25e3,
    0x0fc19dc68b8cd5b5, 0x240ca1cc77ac9c65, 0x2de92c6f592b0275,
    0x4a7484aa6ea6e483, 0x5cb0a9dcbd41fbd4, 0x76f988da831153b5,
    0x983e5152ee66dfab, 0xa831c66d2db43210, 0xb00327c898fb213f,
    0xbf597fc7beef0ee4, 0xc6e00bf33da88fc2, 0xd5a79147930aa725,
    0x06ca6351e003826f, 0x142929670a0e6e70, 0x27b70a8546d22ffc,
    0x2e1b21385c26c926, 0x4d2c6dfc5ac42aed, 0x53380d139d95b3df,
    0x650a73548baf63de, 0x766a0abb3c77b2a8, 0x81c2c92e47edaee6,
    0x92722c851482353b, 0xa2bfe8a14cf10364, 0xa81a664bbc423001,
    0xc24b8b70d0f89791, 0xc76c51a30654be30, 0xd192e819d6ef5218,
    0xd69906245565a910, 0xf40e35855771202a, 0x106aa07032bbd1b8,
    0x19a4c116b8d2d0c8, 0x1e376c085141ab53, 0x2748774cdf8eeb99,
    0x34b0bcb5e19b48a8, 0x391c0cb3c5c95a63, 0x4ed8aa4ae3418acb,
    0x5b9cca4f7763e373, 0x682e6ff3d6b2b8a3, 0x748f82ee5defb2fc,
    0x78a5636f43172f60, 0x84c87814a1f0ab72, 0x8cc702081a6439ec,
    0x90befffa23631e28, 0xa4506cebde82bde9, 0xbef9a3f7b2c67915,
    0xc67178f2e372532b, 0xca273eceea26619c, 0xd186b8c721c0c207,
    0xeada7dd6cde0eb1e, 0xf57d4f7fee6ed178, 0x06f067aa72176fba,
    0x0a637dc5a2c898a6, 0x113f9804bef90dae, 0x1b710b35131c471b,
    0x28db77f523047d84, 0x32caab7b40c72493, 0x3c9ebe0a15c9bebc,
    0x431d67c49c100d4c, 0x4cc5d4becb3e42b6, 0x597f299cfc657e2a,
    0x5fcb6fab3ad6faec, 0x6c44198c4a475817};

static void sha512_blocks_portable(hq_ctx *ctx, const uint8_t *in, size_t n) {
  sha512_compress(ctx->s.w64, in, n, 0);
}

/* FIPS 180-4 §5.3.4 and §5.3.5. */
static const uint64_t IV384[8] = {
    0xcbbb9d5dc1059ed8, 0x629a292a367cd507, 0x9159015a3070dd17,
    0x152fecd8f70e5939, 0x67332667ffc00b31, 0x8eb44a8768581511,
    0xdb0c2e0d64f98fa7, 0x47b5481dbefa4fa4};
static const uint64_t IV512[8] = {
    0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b,
    0xa54ff53a5f1d36f1, 0x510e527fade682d1, 0x9b05688c2b3e6c1f,
    0x1f83d9abfb41bd6b, 0x5be0cd19137e2179};

static void init384(hq_ctx *c, const uint8_t *custom, size_t custom_len) {
  (void)custom, (void)custom_len;
  memcpy(c->s.w64, IV384, sizeof IV384);
}

static void init512(hq_ctx *c, const uint8_t *custom, size_t custom_len) {
  (void)custom, (void)custom_len;
  memcpy(c->s.w64, IV512, sizeof IV512);
}

/* Big-endian stores of the length and the digest: GCC does not merge the
 * byte stores of hq_store64_be into one here, so a byte swap where the
 * compiler has one (the byte order is checked at compile time). */
static inline void store64_be(uint8_t *p, uint64_t v) {
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  v = __builtin_bswap64(v);
  memcpy(p, &v, 8);
#else
  hq_store64_be(p, v);
#endif
}

/* b[n..127] = 0 for n < 128. On x86-64 with SSE2 (always there) a masked
 * copy of all eight 16-byte lanes: a variable-length memset compiles to
 * REP STOSQ, whose start-up cost was a visible part of a 64-byte hash. */
static inline void zero_tail(uint8_t *b, size_t n) {
#if defined(HQ_X86_64)
  const __m128i lim = _mm_set1_epi8((char)n), step = _mm_set1_epi8(16);
  __m128i idx = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                              14, 15);
  for (int k = 0; k < 128; k += 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)(b + k));
    v = _mm_and_si128(v, _mm_cmpgt_epi8(lim, idx));
    _mm_storeu_si128((__m128i *)(b + k), v);
    idx = _mm_add_epi8(idx, step);
  }
#else
  memset(b + n, 0, 128 - n);
#endif
}

/* §5.1.2: 0x80, zeros, the 128-bit big-endian bit length (its high 64 bits
 * hold the top 3 bits of the 64-bit byte count), through the dispatched
 * block function. outlen is the digest length: 48 (H0..H5) or 64. c is a
 * scratch copy, so the padding is built in c->buf itself (HQ_MAX_BLOCK >=
 * 128 bytes): one block, or two when the length does not fit after the
 * tail (n >= 112). */
static void sha512_final(hq_ctx *c, uint8_t *out, size_t outlen) {
  void (*blocks)(hq_ctx *, const uint8_t *, size_t) =
      hq_algo_by_id((int)c->algo)->blocks;
  size_t n = c->buffered;
  zero_tail(c->buf, n);
  c->buf[n] = 0x80;
  if (n >= 112) {
    blocks(c, c->buf, 1);
    zero_tail(c->buf, 0);
  }
  store64_be(c->buf + 112, c->total >> 61);
  store64_be(c->buf + 120, c->total << 3);
  blocks(c, c->buf, 1);
  for (size_t i = 0; i < outlen / 8; i++)
    store64_be(out + 8 * i, c->s.w64[i]);
}

/* hq_hash without a context to initialize (hq_algo.oneshot): the whole
 * blocks straight from the input, the tail through sha512_final. Only the
 * fields the block function and sha512_final read are set. */
static void sha512_oneshot(const hq_algo *a, const uint64_t iv[8],
                           const uint8_t *in, size_t len, uint8_t *out,
                           size_t outlen) {
  hq_ctx c;
  size_t n = len / 128, tail = len % 128;
  c.algo = (uint32_t)a->info.id;
  memcpy(c.s.w64, iv, 64);
  if (n) a->blocks(&c, in, n);
  c.total = len;
  c.buffered = (uint32_t)tail;
  memcpy(c.buf, in + 128 * n, tail);
  sha512_final(&c, out, outlen);
}

static void oneshot384(const uint8_t *in, size_t len, uint8_t *out,
                       size_t outlen) {
  sha512_oneshot(&hq_algo_sha384, IV384, in, len, out, outlen);
}

static void oneshot512(const uint8_t *in, size_t len, uint8_t *out,
                       size_t outlen) {
  sha512_oneshot(&hq_algo_sha512, IV512, in, len, out, outlen);
}

static void sha512_select(hq_algo *self, uint32_t cpu) {
  self->blocks = sha512_blocks_portable;
  self->impl = "portable";
#if defined(HQ_X86_64)
  const uint32_t avx2 = HQ_CPU_X86_AVX2 | HQ_CPU_X86_BMI2;
  if ((cpu & avx2) == avx2) {
    self->blocks = hq_sha512_blocks_avx2;
    self->impl = "avx2";
    if (cpu & HQ_CPU_X86_AVX512VL) {
      self->blocks = hq_sha512_blocks_avx512vl;
      self->impl = "avx512vl";
    }
  }
#elif defined(HQ_RISCV64)
  const uint32_t zknh = HQ_CPU_RV_ZKNH | HQ_CPU_RV_ZBB;
  if ((cpu & zknh) == zknh) {
    self->blocks = hq_sha512_blocks_zknh;
    self->impl = "zknh";
  } else if (cpu & HQ_CPU_RV_ZBB) {
    self->blocks = hq_sha512_blocks_zbb;
    self->impl = "zbb";
  }
#else
  (void)cpu;
#endif
}

hq_algo hq_algo_sha384 = {
    .info = {HQ_SHA384, "sha384", 48, 128, 0, 0, "FIPS 180-4"},
    .word_size = 8, .state_words = 8,
    .init = init384, .blocks = sha512_blocks_portable, .final = sha512_final,
    .select = sha512_select, .oneshot = oneshot384, .impl = "portable"};

hq_algo hq_algo_sha512 = {
    .info = {HQ_SHA512, "sha512", 64, 128, 0, 0, "FIPS 180-4"},
    .word_size = 8, .state_words = 8,
    .init = init512, .blocks = sha512_blocks_portable,
    .final = sha512_final, .select = sha512_select, .oneshot = oneshot512,
    .impl = "portable"};
