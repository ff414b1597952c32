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
 * Implementation: inside the permutation each row is a 64-bit word with
 * one cell per byte (cell j in the low nibble of byte j), so that GF(16)
 * doublings can be left unreduced for a whole Horner chain (a cell grows to
 * at most 7 bits, reduced once per output cell). The S-box is a Boolean
 * circuit on two rows at once (their nibbles interleaved in one word) and
 * MixColumnSerial is eight steps of the serial matrix. No table lookups:
 * constant time. blocks() converts the state to this form once per call.
 */
#include "internal.h"

#define PHOTON_ROUNDS 12
#define NIB(b) (0x1111111111111111ull * (b))
#if defined(__GNUC__)
#define PHOTON_NOINLINE __attribute__((noinline))
#else
#define PHOTON_NOINLINE
#endif
#define LANES(b) (0x0101010101010101ull * (b))

/* PRESENT's S-box {c,5,6,b,9,0,a,d,3,e,f,8,4,7,1,2} on all 16 nibbles of
 * a word, bitsliced inside the nibbles. With x0..x3 the input bits (x0 the
 * least significant), its algebraic normal form gives
 *   y0 = x0 ^ x2 ^ x3 ^ x1x2
 *   y1 = x1 ^ x3 ^ x3(x1 ^ x2) ^ x0(x1x2 ^ x3(x1 ^ x2))
 *   y2 = ~(x2 ^ x3 ^ x0x1 ^ x3((x0 | x1) ^ x0x2))
 *   y3 = ~(x0 ^ x1 ^ x3 ^ x1x2 ^ x0x1x2 ^ x0x3(x1 ^ x2))
 * The shifted copies carry garbage in the other bit positions, which the
 * final masks drop. Not inlined: four interleaved copies of the circuit
 * would not fit the registers of a 64-bit RISC CPU. */
static PHOTON_NOINLINE uint64_t photon_sbox(uint64_t w) {
  uint64_t x0 = w, x1 = w >> 1, x2 = w >> 2, x3 = w >> 3;
  uint64_t a12 = x1 & x2, v = x3 & (x1 ^ x2), x03 = x0 ^ x3;
  uint64_t e = x0 & (a12 ^ v);
  uint64_t y0 = x03 ^ x2 ^ a12;
  uint64_t y1 = x1 ^ x3 ^ v ^ e;
  uint64_t y2 = x2 ^ x3 ^ (x0 & x1) ^ (x3 & ((x0 | x1) ^ (x0 & x2)));
  uint64_t y3 = x03 ^ x1 ^ a12 ^ e;
  return ((y0 & NIB(1)) | ((y1 & NIB(1)) << 1) | ((y2 & NIB(1)) << 2) |
          ((y3 & NIB(1)) << 3)) ^ NIB(0xc);
}

/* Round constants: RC_k ^ IC_i is added to cell (i, 0) in round k. */
static const uint8_t photon_rc[PHOTON_ROUNDS] = {1, 3, 7, 14, 13, 11,
                                                 6, 12, 9, 2,  5,  10};

/* AddConstant, SubCells and ShiftRows (row i moves left by i cells: new
 * cell j = old cell j + i, a right rotation by 8i bits), two rows at a
 * time: row i + 1's nibbles go into the high halves of row i's bytes. */
#define SUB_SHIFT(a, b, i, rc2, ic)                                     \
  do {                                                                  \
    uint64_t w = photon_sbox((a | b << 4) ^ rc2 ^ ic);                  \
    a = hq_rotr64(w & LANES(0x0f), 8 * (i));                            \
    b = hq_rotr64((w >> 4) & LANES(0x0f), 8 * (i) + 8);                 \
  } while (0)

/* One step of MixColumnSerial: the serial matrix's last row
 * (2, 4, 2, 11, 2, 8, 5, 6) times rows q0..q7, i.e.
 * x^3(q3^q5) ^ x^2(q1^q6^q7) ^ x(q0^q2^q3^q4^q7) ^ (q3^q6) by Horner's
 * rule with unreduced doublings, then one reduction by x^4 = x + 1 (bits
 * 4..6 of each byte fold into bits 0..3). The rows then move up by one and
 * the new row comes last: the caller passes the rows rotated, and the new
 * row overwrites q0's variable. After eight steps variable i holds output
 * row i. */
#define MC_STEP(q0, q1, q2, q3, q4, q5, q6, q7)                         \
  do {                                                                  \
    uint64_t acc = ((q3 ^ q5) << 1) ^ q1 ^ q6 ^ q7;                     \
    acc = (acc << 1) ^ q0 ^ q2 ^ q3 ^ q4 ^ q7;                          \
    acc = (acc << 1) ^ q3 ^ q6;                                         \
    uint64_t hi = acc & LANES(0x70);                                    \
    q0 = (acc & LANES(0x0f)) ^ (hi >> 4) ^ (hi >> 3);                   \
  } while (0)

static void photon256(uint64_t r[8]) {
  for (unsigned k = 0; k < PHOTON_ROUNDS; k++) {
    uint64_t r0 = r[0], r1 = r[1], r2 = r[2], r3 = r[3], r4 = r[4],
             r5 = r[5], r6 = r[6], r7 = r[7];
    uint64_t rc2 = (uint64_t)photon_rc[k] * 0x11; /* IC = 0,1,3,7,15,14,12,8 */
    SUB_SHIFT(r0, r1, 0, rc2, 0x10);
    SUB_SHIFT(r2, r3, 2, rc2, 0x73);
    SUB_SHIFT(r4, r5, 4, rc2, 0xef);
    SUB_SHIFT(r6, r7, 6, rc2, 0x8c);
    MC_STEP(r0, r1, r2, r3, r4, r5, r6, r7);
    MC_STEP(r1, r2, r3, r4, r5, r6, r7, r0);
    MC_STEP(r2, r3, r4, r5, r6, r7, r0, r1);
    MC_STEP(r3, r4, r5, r6, r7, r0, r1, r2);
    MC_STEP(r4, r5, r6, r7, r0, r1, r2, r3);
    MC_STEP(r5, r6, r7, r0, r1, r2, r3, r4);
    MC_STEP(r6, r7, r0, r1, r2, r3, r4, r5);
    MC_STEP(r7, r0, r1, r2, r3, r4, r5, r6);
    r[0] = r0, r[1] = r1, r[2] = r2, r[3] = r3;
    r[4] = r4, r[5] = r5, r[6] = r6, r[7] = r7;
  }
}

/* A row's 8 nibbles (a 32-bit word) to one cell per byte, and back. */
static inline uint64_t spread(uint32_t v) {
  uint64_t x = v;
  x = (x | x << 16) & 0x0000ffff0000ffffull;
  x = (x | x << 8) & 0x00ff00ff00ff00ffull;
  return (x | x << 4) & LANES(0x0f);
}
static inline uint32_t gather(uint64_t x) {
  x = (x | x >> 4) & 0x00ff00ff00ff00ffull;
  x = (x | x >> 8) & 0x0000ffff0000ffffull;
  return (uint32_t)(x | x >> 16);
}
static void to_lanes(uint64_t r[8], const uint32_t *s) {
  for (unsigned i = 0; i < 8; i++) r[i] = spread(s[i]);
}
static void from_lanes(uint32_t *s, const uint64_t r[8]) {
  for (unsigned i = 0; i < 8; i++) s[i] = gather(r[i]);
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
  if (!n) return;
  uint64_t r[8];
  to_lanes(r, s);
  for (; n; n--, in += 4) {
    photon256(r);
    r[0] ^= spread(hq_load32_le(in));
  }
  from_lanes(s, r);
}

static void photon256_rows(uint32_t *s) {
  uint64_t r[8];
  to_lanes(r, s);
  photon256(r);
  from_lanes(s, r);
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
    photon256_rows(s);
    memcpy(block, c->buf, n);
    if (n < 4) block[n] = 0x01;
    c0 = n < 4 ? 2 : 1;
  }
  for (unsigned i = 0; i < 4; i++) s[i] ^= hq_load32_le(block + 4 * i);
  s[7] ^= c0 << 29;
  for (unsigned half = 0; half < 2; half++) {
    photon256_rows(s);
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
