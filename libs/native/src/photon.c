/*
 * PHOTON-Beetle-Hash with a 32-bit rate (photonbeetlehash256rate32v1), from
 * "PHOTON-Beetle Authenticated Encryption and Hash Family", NIST LWC
 * final-round submission v1.1 (2021): PHOTON-Beetle-Hash[r] and the
 * PHOTON-256 permutation (8x8 cells of 4 bits, 12 rounds).
 *
 * Mode (byte view of the 32-byte state; "c0" goes into the top three bits
 * of byte 31, i.e. byte 31 ^= c0 << 5):
 *   |M| = 0:      c0 = 1 on the zero state (no padding byte).
 *   |M| <= 16:    state = M || 0x01 (if |M| < 16) || zeros;
 *                 c0 = 1 if |M| < 16, else 2.
 *   |M| > 16:     state = first 16 bytes || zeros; the rest is cut into
 *                 4-byte blocks; for each block: permute, add the block
 *                 (the last one padded with 0x01 if shorter than 4);
 *                 c0 = 1 if the last block was full, else 2.
 *   Then squeeze: permute, output bytes 0..15, permute, bytes 0..15.
 * Blocks: 4 bytes, lazy (a full last block gets a different c0). The
 * first four blocks are added without a permutation, so the state keeps a
 * phase counter (blocks absorbed, capped at 4) that check() ties to the
 * byte count.
 *
 * State: row i of the 8x8 cell matrix is the little-endian 32-bit word of
 * bytes 4i..4i+3 (cell j in bits 4j..4j+3, the reference's nibble order),
 * c->s.w32[0..7]; the phase counter is c->s.w32[8].
 *
 * Implementation: rows are nibble-packed words; the S-box is a Boolean
 * circuit on whole words (two rows per 64-bit word) and MixColumnSerial
 * is eight steps of the serial matrix with GF(16) doubling on packed
 * nibbles: no table lookups, constant time.
 */
#include "internal.h"

#define PHOTON_ROUNDS 12
#define NIB(b) (0x1111111111111111ull * (b))

/* PRESENT's S-box {c,5,6,b,9,0,a,d,3,e,f,8,4,7,1,2} on all 16 nibbles of
 * a word, bitsliced inside the nibbles. With x0..x3 the input bits (x0 the
 * least significant), its algebraic normal form gives
 *   y0 = x0 ^ x2 ^ x3 ^ x1x2
 *   y1 = x1 ^ x3 ^ x3(x1 ^ x2) ^ x0(x1x2 ^ x3(x1 ^ x2))
 *   y2 = ~(x2 ^ x3 ^ x0x1 ^ x3((x0 | x1) ^ x0x2))
 *   y3 = ~(x0 ^ x1 ^ x3 ^ x1x2 ^ x0x1x2 ^ x0x3(x1 ^ x2))
 * The shifted copies carry garbage in the other bit positions, which the
 * final masks drop. */
static inline uint64_t photon_sbox(uint64_t w) {
  uint64_t x0 = w, x1 = w >> 1, x2 = w >> 2, x3 = w >> 3;
  uint64_t a12 = x1 & x2, v = x3 & (x1 ^ x2), x03 = x0 ^ x3;
  uint64_t y0 = x03 ^ x2 ^ a12;
  uint64_t y1 = x1 ^ x3 ^ v ^ (x0 & (a12 ^ v));
  uint64_t y2 = x2 ^ x3 ^ (x0 & x1) ^ (x3 & ((x0 | x1) ^ (x0 & x2)));
  uint64_t y3 = x03 ^ x1 ^ a12 ^ (x0 & (a12 ^ v));
  return ((y0 & NIB(1)) | ((y1 & NIB(1)) << 1) | ((y2 & NIB(1)) << 2) |
          ((y3 & NIB(1)) << 3)) ^ NIB(0xc);
}

/* Multiplication by x in GF(16) = GF(2)[x]/(x^4 + x + 1), all nibbles. */
static inline uint32_t gf16_double(uint32_t v) {
  uint32_t t = (v >> 3) & 0x11111111u;
  return ((v << 1) & 0xeeeeeeeeu) ^ t ^ (t << 1);
}

/* One step of MixColumnSerial: the serial matrix's last row
 * (2, 4, 2, 11, 2, 8, 5, 6) times rows r0..r7, i.e.
 * 8(r3^r5) ^ 4(r1^r6^r7) ^ 2(r0^r2^r3^r4^r7) ^ (r3^r6), by Horner's rule.
 * The rows then move up by one and the new row comes last: the state is a
 * ring r[(k + i) & 7] and step k overwrites the slot of r0. After eight
 * steps slot i holds output row i. */
#define MC_STEP(r, k)                                                        \
  do {                                                                       \
    uint32_t q0 = r[(k) & 7], q1 = r[(k + 1) & 7], q2 = r[(k + 2) & 7],      \
             q3 = r[(k + 3) & 7], q4 = r[(k + 4) & 7], q5 = r[(k + 5) & 7],  \
             q6 = r[(k + 6) & 7], q7 = r[(k + 7) & 7];                       \
    uint32_t acc = gf16_double(q3 ^ q5) ^ q1 ^ q6 ^ q7;                      \
    acc = gf16_double(acc) ^ q0 ^ q2 ^ q3 ^ q4 ^ q7;                         \
    r[(k) & 7] = gf16_double(acc) ^ q3 ^ q6;                                 \
  } while (0)

/* Round constants: RC_k ^ IC_i is added to cell (i, 0) in round k. */
static const uint8_t photon_rc[PHOTON_ROUNDS] = {1, 3, 7, 14, 13, 11,
                                                 6, 12, 9, 2,  5,  10};
static const uint8_t photon_ic[8] = {0, 1, 3, 7, 15, 14, 12, 8};

static void photon256(uint32_t r[8]) {
  for (unsigned k = 0; k < PHOTON_ROUNDS; k++) {
    for (unsigned i = 0; i < 8; i += 2) {
      uint64_t w = (uint64_t)(r[i] ^ photon_rc[k] ^ photon_ic[i]) |
                   (uint64_t)(r[i + 1] ^ photon_rc[k] ^ photon_ic[i + 1]) << 32;
      w = photon_sbox(w);
      /* ShiftRows: row i moves left by i cells (new cell j = old j + i) */
      r[i] = hq_rotr32((uint32_t)w, 4 * i);
      r[i + 1] = hq_rotr32((uint32_t)(w >> 32), 4 * (i + 1));
    }
    MC_STEP(r, 0); MC_STEP(r, 1); MC_STEP(r, 2); MC_STEP(r, 3);
    MC_STEP(r, 4); MC_STEP(r, 5); MC_STEP(r, 6); MC_STEP(r, 7);
  }
}

#define PHASE 8         /* index of the phase counter in c->s.w32 */
#define INITIAL_BLOCKS 4 /* 16 bytes added before the first permutation */

static void photon_init(hq_ctx *c, const uint8_t *custom, size_t custom_len) {
  (void)custom;
  (void)custom_len;
  memset(c->s.w32, 0, 9 * sizeof(uint32_t));
}

static void photon_blocks(hq_ctx *c, const uint8_t *in, size_t n) {
  uint32_t *s = c->s.w32;
  for (; n && s[PHASE] < INITIAL_BLOCKS; n--, in += 4)
    s[s[PHASE]++] ^= hq_load32_le(in);
  for (; n; n--, in += 4) {
    photon256(s);
    s[0] ^= hq_load32_le(in);
  }
}

static void photon_final(hq_ctx *c, uint8_t *out, size_t outlen) {
  uint32_t *s = c->s.w32;
  uint8_t block[16] = {0};
  size_t n = c->buffered;
  uint32_t c0;
  (void)outlen;
  if (c->total <= 16) { /* the message (or its tail) goes in directly */
    memcpy(block + 4 * s[PHASE], c->buf, n);
    if (c->total && c->total < 16) block[c->total] = 0x01; /* ozs */
    c0 = c->total < 16 ? 1 : 2;
  } else {
    photon256(s);
    memcpy(block, c->buf, n);
    if (n < 4) block[n] = 0x01;
    c0 = n < 4 ? 2 : 1;
  }
  for (unsigned i = 0; i < 4; i++) s[i] ^= hq_load32_le(block + 4 * i);
  s[7] ^= c0 << 29;
  for (unsigned half = 0; half < 2; half++) {
    photon256(s);
    for (unsigned i = 0; i < 4; i++) hq_store32_le(out + 16 * half + 4 * i, s[i]);
  }
}

/* The phase counter must be what the byte count implies, and the rows the
 * first blocks have not reached yet must still be zero. */
static int photon_check(const hq_ctx *c) {
  uint64_t blocks = (c->total - c->buffered) / 4;
  uint32_t phase = blocks < INITIAL_BLOCKS ? (uint32_t)blocks : INITIAL_BLOCKS;
  if (c->s.w32[PHASE] != phase) return 1;
  for (unsigned i = phase; i < 8 && phase < INITIAL_BLOCKS; i++)
    if (c->s.w32[i]) return 1;
  return 0;
}

static void photon_select(hq_algo *self, uint32_t cpu) {
  (void)cpu;
  self->blocks = photon_blocks;
  self->impl = "portable";
}

hq_algo hq_algo_photonbeetlehash256 = {
    .info = {HQ_PHOTONBEETLEHASH256, "photonbeetlehash256", 32, 4, 0, 0,
             "NIST LWC final round (PHOTON-Beetle v1.1)"},
    .word_size = 4, .state_words = 9, .lazy = 1,
    .init = photon_init, .blocks = photon_blocks, .final = photon_final,
    .select = photon_select, .check = photon_check, .impl = "portable"};
