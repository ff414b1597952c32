/*
 * Romulus-H: the hash function of Romulus v1.3 (NIST LWC final round).
 * Source: "Romulus v1.3", final-round submission (2021), section 2.4
 * (Romulus-H, CF) and section 2.1-2.2 (SKINNY-128-384+: SKINNY-128-384
 * with 40 rounds, from "The SKINNY Family of Block Ciphers and Its
 * Low-Latency Variant MANTIS", CRYPTO 2016).
 *
 * MDPH with Hirose's double-block-length compression: the 256-bit chaining
 * value is (L, R) = (h, g), 16 bytes each, initially zero. Each 32-byte
 * block M is the tweakey of both encryptions, TK1 = g, TK2 || TK3 = M:
 *   h' = E(h) ^ h,   g' = E(h ^ 1) ^ h ^ 1   (^ 1: byte 0)
 * The message is cut into 32-byte blocks; the rest (0..31 bytes, so an
 * extra all-zero block when the length is a multiple of 32) is padded with
 * zeros and its length in the last byte, and h ^= 2 (byte 0) before that
 * last block. Digest: h || g. The last block is always a padded one, so
 * the mode is not "lazy". Checked against LWC_HASH_KAT_256.txt.
 *
 * State: h, g as four host integers (little-endian loads of the 32 bytes)
 * in c->s.w64[0..3].
 *
 * Implementation: a SKINNY state is four 32-bit rows (cell c of row r is
 * byte 4r + c, in bits 8c..8c+7). The two encryptions of one block share
 * their tweakey, so they run side by side in 64-bit words (low half: E(h),
 * high half: E(h ^ 1)) and the round tweakeys are computed once. The 8-bit
 * S-box is computed on all 8 bytes of a word at once with shifts and masks
 * (no table lookups: constant time).
 */
#include "internal.h"

#define SKINNY_ROUNDS 40
#define BYTES(b) (0x0101010101010101ull * (uint8_t)(b))

/*
 * S8: four times "bit 4 ^= NOR(bit 7, bit 6); bit 0 ^= NOR(bit 3, bit 2)",
 * with the bit permutation P between them (new bit i = old bit
 * {5,3,0,4,6,7,1,2}[i]) and a swap of bits 1 and 2 at the end (SKINNY paper,
 * figure 5). Instead of moving bits after every step, each step reads the
 * bits where they currently are, and one final permutation puts them in
 * place: the positions below follow the logical bits through P.
 */
#define NORX(x, t, a, b) \
  ((x) ^ (~((a) | (b)) & BYTES(1u << (t))))
static inline uint64_t skinny_sbox(uint64_t x) {
  x ^= ~((x >> 3) | (x >> 2)) & BYTES(0x11); /* 4 <- 7,6 ; 0 <- 3,2 */
  x = NORX(x, 6, x << 4, x << 5);            /* 6 <- 2,1 */
  x = NORX(x, 5, x << 1, x << 5);            /* 5 <- 4,0 */
  x = NORX(x, 1, x << 1, x >> 2);            /* 1 <- 0,3 */
  x = NORX(x, 7, x << 1, x << 2);            /* 7 <- 6,5 */
  x = NORX(x, 3, x >> 2, x >> 1);            /* 3 <- 5,4 */
  x = NORX(x, 2, x << 1, x >> 5);            /* 2 <- 1,7 */
  /* output bit i sits at {2,7,6,1,3,0,4,5}[i] */
  return ((x >> 2) & BYTES(0x01)) | ((x >> 6) & BYTES(0x02)) |
         ((x >> 4) & BYTES(0x04)) | ((x << 2) & BYTES(0xc8)) |
         ((x << 1) & BYTES(0x10)) | ((x << 5) & BYTES(0x20));
}

/* Rotate both 32-bit halves left by 8n bits (ShiftRows of rows 1..3). */
static inline uint64_t rot_halves(uint64_t x, unsigned n) {
  uint64_t lo = 0x0000000100000001ull * (0xffffffffu >> (32 - n));
  return ((x << n) & ~lo) | ((x >> (32 - n)) & lo);
}

/* The tweakey permutation P_T (new cell i = old cell
 * {9,15,8,13,10,14,12,11,0,1,2,3,4,5,6,7}[i]) maps the bottom half to the
 * top one with this byte shuffle of a little-endian word: new byte i = old
 * bottom byte {1,7,0,5,2,6,4,3}[i]. The top half becomes the bottom one. */
static inline uint64_t tk_shuffle(uint64_t b) {
  return ((b >> 8) & 0x0000ff00000000ffull) | ((b >> 48) & 0x000000000000ff00ull) |
         ((b << 16) & 0x00ff00ff00ff0000ull) | ((b >> 16) & 0x00000000ff000000ull) |
         ((b << 32) & 0xff00000000000000ull);
}
/* LFSRs on the top half of TK2 and TK3, bytewise. */
static inline uint64_t lfsr2(uint64_t x) {
  return ((x << 1) & BYTES(0xfe)) | (((x >> 7) ^ (x >> 5)) & BYTES(0x01));
}
static inline uint64_t lfsr3(uint64_t x) {
  return ((x >> 1) & BYTES(0x7f)) | (((x << 7) ^ (x << 1)) & BYTES(0x80));
}

/* Round tweakeys (rows 0 and 1 of TK1 ^ TK2 ^ TK3, with the round
 * constants c0, c1 folded in), each row duplicated into both halves. */
static void skinny_schedule(uint64_t rk[2 * SKINNY_ROUNDS], const uint64_t tk1[2],
                            const uint8_t *tk23) {
  uint64_t t1 = tk1[0], b1 = tk1[1];
  uint64_t t2 = hq_load64_le(tk23), b2 = hq_load64_le(tk23 + 8);
  uint64_t t3 = hq_load64_le(tk23 + 16), b3 = hq_load64_le(tk23 + 24);
  unsigned rc = 0;
  for (unsigned i = 0; i < SKINNY_ROUNDS; i++) {
    rc = ((rc << 1) & 0x3f) | (((rc >> 5) ^ (rc >> 4) ^ 1) & 1);
    uint64_t k = t1 ^ t2 ^ t3 ^ (rc & 0xf) ^ ((uint64_t)(rc >> 4) << 32);
    rk[2 * i] = (k & 0xffffffffu) * 0x0000000100000001ull;
    rk[2 * i + 1] = (k >> 32) * 0x0000000100000001ull;
    uint64_t n1 = tk_shuffle(b1), n2 = lfsr2(tk_shuffle(b2)),
             n3 = lfsr3(tk_shuffle(b3));
    b1 = t1, b2 = t2, b3 = t3;
    t1 = n1, t2 = n2, t3 = n3;
  }
}

/* One round on rows (a, b, c, d); MixColumns leaves the rows renamed
 * (d, a, b, c), which the caller follows. */
#define SKINNY_ROUND(a, b, c, d, k)                    \
  do {                                                 \
    a = skinny_sbox(a) ^ (k)[0];                       \
    b = rot_halves(skinny_sbox(b) ^ (k)[1], 8);        \
    c = rot_halves(skinny_sbox(c) ^ C2, 16);           \
    d = rot_halves(skinny_sbox(d), 24);                \
    b ^= c;                                            \
    c ^= a;                                            \
    d ^= c;                                            \
  } while (0)

/* Hirose compression of one 32-byte block. */
static void romulus_compress(uint64_t s[4], const uint8_t *m) {
  const uint64_t C2 = 0x0000000200000002ull; /* constant 0x2 in cell (2,0) */
  uint64_t rk[2 * SKINNY_ROUNDS];
  skinny_schedule(rk, s + 2, m);
  uint64_t h0 = s[0], h1 = s[1];
  uint64_t r0 = (h0 & 0xffffffffu) | ((h0 ^ 1) << 32);
  uint64_t r1 = (h0 >> 32) * 0x0000000100000001ull;
  uint64_t r2 = (h1 & 0xffffffffu) * 0x0000000100000001ull;
  uint64_t r3 = (h1 >> 32) * 0x0000000100000001ull;
  for (const uint64_t *k = rk; k < rk + 2 * SKINNY_ROUNDS; k += 8) {
    SKINNY_ROUND(r0, r1, r2, r3, k);
    SKINNY_ROUND(r3, r0, r1, r2, k + 2);
    SKINNY_ROUND(r2, r3, r0, r1, k + 4);
    SKINNY_ROUND(r1, r2, r3, r0, k + 6);
  }
  const uint64_t lo = 0xffffffffu;
  s[0] = ((r0 & lo) | (r1 << 32)) ^ h0;
  s[1] = ((r2 & lo) | (r3 << 32)) ^ h1;
  s[2] = ((r0 >> 32) | (r1 & ~lo)) ^ h0 ^ 1;
  s[3] = ((r2 >> 32) | (r3 & ~lo)) ^ h1;
}

static void romulush_init(hq_ctx *c, const uint8_t *custom, size_t custom_len) {
  (void)custom;
  (void)custom_len;
  memset(c->s.w64, 0, 4 * sizeof(uint64_t));
}

static void romulush_blocks(hq_ctx *c, const uint8_t *in, size_t n) {
  for (; n; n--, in += 32) romulus_compress(c->s.w64, in);
}

static void romulush_final(hq_ctx *c, uint8_t *out, size_t outlen) {
  uint8_t last[32] = {0};
  (void)outlen;
  memcpy(last, c->buf, c->buffered);
  last[31] = (uint8_t)c->buffered;
  c->s.w64[0] ^= 2;
  romulus_compress(c->s.w64, last);
  for (unsigned i = 0; i < 4; i++) hq_store64_le(out + 8 * i, c->s.w64[i]);
}

static void romulush_select(hq_algo *self, uint32_t cpu) {
  (void)cpu;
  self->blocks = romulush_blocks;
  self->impl = "portable";
}

hq_algo hq_algo_romulush = {
    .info = {HQ_ROMULUSH, "romulush", 32, 32, 0, 0,
             "NIST LWC final round (Romulus v1.3)"},
    .word_size = 8, .state_words = 4,
    .init = romulush_init, .blocks = romulush_blocks, .final = romulush_final,
    .select = romulush_select, .impl = "portable"};
