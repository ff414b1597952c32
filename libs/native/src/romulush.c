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
 * (the tables below are only indexed by compile-time constants: no
 * secret-dependent lookups, constant time). Rounds are unrolled by 8 so
 * that each uses its own bit order (see S8 below).
 */
#include "internal.h"

#define SKINNY_ROUNDS 40
/* The round functions take their bit order as a constant argument: they
 * must be inlined for the tables below to fold into shift counts. */
#if defined(__GNUC__)
#define SKINNY_INLINE static inline __attribute__((always_inline))
#else
#define SKINNY_INLINE static inline
#endif
#define BYTES(b) (0x0101010101010101ull * (uint8_t)(b))

/*
 * S8: four times "bit 4 ^= NOR(bit 7, bit 6); bit 0 ^= NOR(bit 3, bit 2)",
 * with the bit permutation P between them (new bit i = old bit
 * {5,3,0,4,6,7,1,2}[i]) and a swap of bits 1 and 2 at the end (SKINNY paper,
 * figure 5). Three changes make it cheap on whole words:
 * - the bits are kept complemented (X = ~x), so NOR(a, b) = ~a & ~b is an
 *   AND of stored bits, and the complement is handled once per round
 *   (see SKINNY_ROUND) instead of once per NOR;
 * - bits are never moved: each step reads them where they are. So the
 *   S-box leaves logical bit i at physical bit Q[i] = {2,7,6,1,3,0,4,5}[i]
 *   instead of bit i;
 * - nothing moves them back: the rest of the round (ShiftRows, MixColumns,
 *   XORs) treats every bit of a byte alike, so the next round simply reads
 *   the bits where they are, and only the round tweakey and constant must
 *   be put in the same order (the schedule does that). After round r, bit
 *   i is at rep[r % 8][i]; Q is an 8-cycle, so after 40 rounds every bit is
 *   home again.
 * s8_steps[m] lists, for an input in order rep[m - 1] (identity for m = 0),
 * the four steps as (target, source, source) twice; rep[m] is the output
 * order. Both tables follow the logical bits through P and were checked
 * against the KAT.
 */
static const uint8_t s8_steps[8][4][6] = {
    {{4, 7, 6, 0, 3, 2}, {6, 2, 1, 5, 4, 0}, {1, 0, 3, 7, 6, 5}, {3, 5, 4, 2, 1, 7}},
    {{3, 5, 4, 2, 1, 6}, {4, 6, 7, 0, 3, 2}, {7, 2, 1, 5, 4, 0}, {1, 0, 3, 6, 7, 5}},
    {{1, 0, 3, 6, 7, 4}, {3, 4, 5, 2, 1, 6}, {5, 6, 7, 0, 3, 2}, {7, 2, 1, 4, 5, 0}},
    {{7, 2, 1, 4, 5, 3}, {1, 3, 0, 6, 7, 4}, {0, 4, 5, 2, 1, 6}, {5, 6, 7, 3, 0, 2}},
    {{5, 6, 7, 3, 0, 1}, {7, 1, 2, 4, 5, 3}, {2, 3, 0, 6, 7, 4}, {0, 4, 5, 1, 2, 6}},
    {{0, 4, 5, 1, 2, 7}, {5, 7, 6, 3, 0, 1}, {6, 1, 2, 4, 5, 3}, {2, 3, 0, 7, 6, 4}},
    {{2, 3, 0, 7, 6, 5}, {0, 5, 4, 1, 2, 7}, {4, 7, 6, 3, 0, 1}, {6, 1, 2, 5, 4, 3}},
    {{6, 1, 2, 5, 4, 0}, {2, 0, 3, 7, 6, 5}, {3, 5, 4, 1, 2, 7}, {4, 7, 6, 0, 3, 1}}};
static const uint8_t rep[8][8] = {
    {2, 7, 6, 1, 3, 0, 4, 5}, {6, 5, 4, 7, 1, 2, 3, 0},
    {4, 0, 3, 5, 7, 6, 1, 2}, {3, 2, 1, 0, 5, 4, 7, 6},
    {1, 6, 7, 2, 0, 3, 5, 4}, {7, 4, 5, 6, 2, 1, 0, 3},
    {5, 3, 0, 4, 6, 7, 2, 1}, {0, 1, 2, 3, 4, 5, 6, 7}};

/* Bit `from` of every byte, moved to bit `to` (constant-folded). */
#define MOVE(x, from, to) \
  ((from) >= (to) ? (x) >> ((from) - (to)) : (x) << ((to) - (from)))
#define NOR_STEP(x, st)                                                   \
  ((x) ^ (MOVE(x, (st)[1], (st)[0]) & MOVE(x, (st)[2], (st)[0]) &        \
          BYTES(1u << (st)[0])) ^                                         \
         (MOVE(x, (st)[4], (st)[3]) & MOVE(x, (st)[5], (st)[3]) &        \
          BYTES(1u << (st)[3])))
/* ~x (in order rep[m - 1]) to ~S8(x) (in order rep[m]); m constant. */
SKINNY_INLINE uint64_t skinny_sbox_c(uint64_t x, unsigned m) {
  x = NOR_STEP(x, s8_steps[m][0]);
  x = NOR_STEP(x, s8_steps[m][1]);
  x = NOR_STEP(x, s8_steps[m][2]);
  return NOR_STEP(x, s8_steps[m][3]);
}
/* x shifted left by d bits (right when d < 0), d constant. */
#define SHIFT(x, d) ((d) >= 0 ? (x) << ((d) & 63) : (x) >> (-(d) & 63))
/* A permutation applied as one masked shift per distinct distance: the
 * masks are constants, and the terms whose mask is 0 fold away. */
#define BY_DISTANCE(x, mask, unit)                                        \
  (SHIFT((x) & mask(-7), -7 * (unit)) | SHIFT((x) & mask(-6), -6 * (unit)) | \
   SHIFT((x) & mask(-5), -5 * (unit)) | SHIFT((x) & mask(-4), -4 * (unit)) | \
   SHIFT((x) & mask(-3), -3 * (unit)) | SHIFT((x) & mask(-2), -2 * (unit)) | \
   SHIFT((x) & mask(-1), -1 * (unit)) | ((x) & mask(0)) |                  \
   SHIFT((x) & mask(1), 1 * (unit)) | SHIFT((x) & mask(2), 2 * (unit)) |   \
   SHIFT((x) & mask(3), 3 * (unit)) | SHIFT((x) & mask(4), 4 * (unit)) |   \
   SHIFT((x) & mask(5), 5 * (unit)) | SHIFT((x) & mask(6), 6 * (unit)) |   \
   SHIFT((x) & mask(7), 7 * (unit)))

/* Logical bit i of every byte to bit rep[m][i] (m constant). */
#define REP_BIT(m, i, d) (rep[m][i] - (i) == (d) ? BYTES(1u << (i)) : 0)
#define REP_MASK(d)                                                      \
  (REP_BIT(m, 0, d) | REP_BIT(m, 1, d) | REP_BIT(m, 2, d) |              \
   REP_BIT(m, 3, d) | REP_BIT(m, 4, d) | REP_BIT(m, 5, d) |              \
   REP_BIT(m, 6, d) | REP_BIT(m, 7, d))
SKINNY_INLINE uint64_t to_rep(uint64_t x, unsigned m) {
  return BY_DISTANCE(x, REP_MASK, 1);
}

/* Rotate both 32-bit halves left by 8n bits (ShiftRows of rows 1..3). */
static inline uint64_t rot_halves(uint64_t x, unsigned n) {
  uint64_t lo = 0x0000000100000001ull * (0xffffffffu >> (32 - n));
  return ((x << n) & ~lo) | ((x >> (32 - n)) & lo);
}

/*
 * The tweakey permutation P_T (new cell i = old cell
 * {9,15,8,13,10,14,12,11,0,1,2,3,4,5,6,7}[i]) moves the bottom half (rows
 * 2-3) to the top with the byte shuffle sigma (new byte i = old byte
 * {1,7,0,5,2,6,4,3}[i] of the bottom half) and the top half unchanged to
 * the bottom; TK2 and TK3 then pass their new top half through an LFSR
 * (bytewise). Only the top half is used, and a byte shuffle commutes with
 * a bytewise map, so the top halves are, for j = 0, 1, ...:
 *   round 2j:     sigma^j (L^j (top half of TK))
 *   round 2j + 1: sigma^(j+1) (L^(j+1) (bottom half of TK))
 * One shuffle per round then serves all three tweakeys, applied to their
 * sum. sigma_pow[p][i] is the source byte of byte i in sigma^p (sigma has
 * order 8).
 */
static const uint8_t sigma_pow[8][8] = {
    {0, 1, 2, 3, 4, 5, 6, 7}, {1, 7, 0, 5, 2, 6, 4, 3},
    {7, 3, 1, 6, 0, 4, 2, 5}, {3, 5, 7, 4, 1, 2, 0, 6},
    {5, 6, 3, 2, 7, 0, 1, 4}, {6, 4, 5, 0, 3, 1, 7, 2},
    {4, 2, 6, 1, 5, 7, 3, 0}, {2, 0, 4, 7, 6, 3, 5, 1}};
#define SIGMA_BYTE(p, i, d) \
  ((i) - sigma_pow[p][i] == (d) ? 0xffull << (8 * sigma_pow[p][i]) : 0)
#define SIGMA_MASK(d)                                                    \
  (SIGMA_BYTE(p, 0, d) | SIGMA_BYTE(p, 1, d) | SIGMA_BYTE(p, 2, d) |     \
   SIGMA_BYTE(p, 3, d) | SIGMA_BYTE(p, 4, d) | SIGMA_BYTE(p, 5, d) |     \
   SIGMA_BYTE(p, 6, d) | SIGMA_BYTE(p, 7, d))
SKINNY_INLINE uint64_t sigma_to(uint64_t x, unsigned p) {
  return BY_DISTANCE(x, SIGMA_MASK, 8);
}

/* LFSRs on the top half of TK2 and TK3, bytewise. */
static inline uint64_t lfsr2(uint64_t x) {
  return ((x << 1) & BYTES(0xfe)) | (((x >> 7) ^ (x >> 5)) & BYTES(0x01));
}
static inline uint64_t lfsr3(uint64_t x) {
  return ((x >> 1) & BYTES(0x7f)) | (((x << 7) ^ (x << 1)) & BYTES(0x80));
}

/* Round constants rc (6-bit LFSR, section 2.2), rounds 1..40. */
static const uint8_t skinny_rc[SKINNY_ROUNDS] = {
    0x01, 0x03, 0x07, 0x0f, 0x1f, 0x3e, 0x3d, 0x3b, 0x37, 0x2f,
    0x1e, 0x3c, 0x39, 0x33, 0x27, 0x0e, 0x1d, 0x3a, 0x35, 0x2b,
    0x16, 0x2c, 0x18, 0x30, 0x21, 0x02, 0x05, 0x0b, 0x17, 0x2e,
    0x1c, 0x38, 0x31, 0x23, 0x06, 0x0d, 0x1b, 0x36, 0x2d, 0x1a};

/* The tweakey halves as the schedule advances them (see above). */
struct skinny_tk {
  uint64_t t1, b1;         /* TK1, top and bottom: never change */
  uint64_t t2, t3, b2, b3; /* L^j of TK2's and TK3's halves */
};

/* Round tweakey of round r = 16q + u (u constant): rows 0 and 1 of
 * TK1 ^ TK2 ^ TK3 with the constants c0, c1 (cells (0,0), (1,0)), in the
 * bit order of round r's S-box output, each row in both halves. */
SKINNY_INLINE void skinny_tk_round(struct skinny_tk *tk, uint64_t rk[2],
                                   unsigned rc, unsigned u) {
  uint64_t k;
  if (u % 2 == 0) {
    k = sigma_to(tk->t1 ^ tk->t2 ^ tk->t3, (u / 2) % 8);
    tk->t2 = lfsr2(tk->t2), tk->t3 = lfsr3(tk->t3);
  } else {
    tk->b2 = lfsr2(tk->b2), tk->b3 = lfsr3(tk->b3);
    k = sigma_to(tk->b1 ^ tk->b2 ^ tk->b3, (u / 2 + 1) % 8);
  }
  k = to_rep(k ^ (rc & 0xf) ^ ((uint64_t)(rc >> 4) << 32), u % 8);
  rk[0] = (k & 0xffffffffu) * 0x0000000100000001ull;
  rk[1] = (k >> 32) * 0x0000000100000001ull;
}
#define TK_ROUNDS8(q, u)                                               \
  skinny_tk_round(&tk, rk + 2 * ((q) + (u) + 0), skinny_rc[(q) + (u) + 0], (u) + 0); \
  skinny_tk_round(&tk, rk + 2 * ((q) + (u) + 1), skinny_rc[(q) + (u) + 1], (u) + 1); \
  skinny_tk_round(&tk, rk + 2 * ((q) + (u) + 2), skinny_rc[(q) + (u) + 2], (u) + 2); \
  skinny_tk_round(&tk, rk + 2 * ((q) + (u) + 3), skinny_rc[(q) + (u) + 3], (u) + 3); \
  skinny_tk_round(&tk, rk + 2 * ((q) + (u) + 4), skinny_rc[(q) + (u) + 4], (u) + 4); \
  skinny_tk_round(&tk, rk + 2 * ((q) + (u) + 5), skinny_rc[(q) + (u) + 5], (u) + 5); \
  skinny_tk_round(&tk, rk + 2 * ((q) + (u) + 6), skinny_rc[(q) + (u) + 6], (u) + 6); \
  skinny_tk_round(&tk, rk + 2 * ((q) + (u) + 7), skinny_rc[(q) + (u) + 7], (u) + 7)

static void skinny_schedule(uint64_t rk[2 * SKINNY_ROUNDS], const uint64_t tk1[2],
                            const uint8_t *tk23) {
  struct skinny_tk tk = {tk1[0], tk1[1], hq_load64_le(tk23), hq_load64_le(tk23 + 16),
                         hq_load64_le(tk23 + 8), hq_load64_le(tk23 + 24)};
  for (unsigned q = 0; q < 32; q += 16) {
    TK_ROUNDS8(q, 0);
    TK_ROUNDS8(q, 8);
  }
  TK_ROUNDS8(32, 0);
}

/* Round m (mod 8) on rows (a, b, c, d); MixColumns leaves the rows
 * renamed (d, a, b, c), which the caller follows. Rows enter and leave
 * complemented. Before MixColumns rows a and b stay complemented, c and d
 * are made plain (c for free through the constant, d by one NOT): then
 * every output row (d^c^a, a, b^c, c^a) is complemented again. The
 * constant 0x2 of cell (2,0) is logical bit 1 of that byte. */
#define SKINNY_ROUND(a, b, c, d, k, m)                                   \
  do {                                                                   \
    const uint64_t c2 = 0x0000000100000001ull << rep[m][1];              \
    a = skinny_sbox_c(a, m) ^ (k)[2 * (m)];                              \
    b = rot_halves(skinny_sbox_c(b, m) ^ (k)[2 * (m) + 1], 8);           \
    c = rot_halves(skinny_sbox_c(c, m) ^ ~c2, 16);                       \
    d = ~rot_halves(skinny_sbox_c(d, m), 24);                            \
    b ^= c;                                                              \
    c ^= a;                                                              \
    d ^= c;                                                              \
  } while (0)

/* Hirose compression of one 32-byte block. */
static void romulus_compress(uint64_t s[4], const uint8_t *m) {
  uint64_t rk[2 * SKINNY_ROUNDS];
  skinny_schedule(rk, s + 2, m);
  uint64_t h0 = s[0], h1 = s[1];
  uint64_t r0 = ~((h0 & 0xffffffffu) | ((h0 ^ 1) << 32));
  uint64_t r1 = ~((h0 >> 32) * 0x0000000100000001ull);
  uint64_t r2 = ~((h1 & 0xffffffffu) * 0x0000000100000001ull);
  uint64_t r3 = ~((h1 >> 32) * 0x0000000100000001ull);
  for (const uint64_t *k = rk; k < rk + 2 * SKINNY_ROUNDS; k += 16) {
    SKINNY_ROUND(r0, r1, r2, r3, k, 0);
    SKINNY_ROUND(r3, r0, r1, r2, k, 1);
    SKINNY_ROUND(r2, r3, r0, r1, k, 2);
    SKINNY_ROUND(r1, r2, r3, r0, k, 3);
    SKINNY_ROUND(r0, r1, r2, r3, k, 4);
    SKINNY_ROUND(r3, r0, r1, r2, k, 5);
    SKINNY_ROUND(r2, r3, r0, r1, k, 6);
    SKINNY_ROUND(r1, r2, r3, r0, k, 7);
  }
  const uint64_t lo = 0xffffffffu;
  r0 = ~r0, r1 = ~r1, r2 = ~r2, r3 = ~r3;
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
