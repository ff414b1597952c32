/*
 * Internal interface between the generic core (core.c, state.c, dispatch.c)
 * and the algorithm families (one file per family, one per ISA variant).
 *
 * An algorithm family file defines one `hq_algo` per algorithm, named
 * hq_algo_<name> (see the list in registry.c), and implements only:
 *   init   – set the chaining/sponge state (ctx->s) for a fresh message;
 *            absorb a customization string if the algorithm takes one;
 *   blocks – absorb n whole blocks of block_len bytes (the hot path);
 *   final  – pad the buffered tail (ctx->buf, ctx->buffered bytes) and
 *            write outlen bytes; ctx is a scratch copy it may clobber;
 *   select – pick `blocks` and `impl` for the CPU (features bitmask).
 * The core does buffering, byte counting, serialization and validation.
 */
#ifndef HASHQ_INTERNAL_H
#define HASHQ_INTERNAL_H

/* riscv64: GCC's scheduling before register allocation interleaves the
 * long unrolled rounds (Keccak, SHA-2, Esch) until they spill; an in-order
 * core gains nothing from it. First, so that every function (the inline
 * helpers below too) gets the same options. */
#if defined(__riscv) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-schedule-insns")
#endif

#include <string.h>

#include "hashq.h"

#define HQ_MAX_BLOCK 168 /* Keccak rate for SHAKE128 */
#define HQ_STATE_BYTES 200

/* Stable algorithm ids: they are written into serialized states. Never
 * renumber; append only. */
enum hq_id {
  HQ_SHA1 = 1,
  HQ_SHA224 = 2,
  HQ_SHA256 = 3,
  HQ_SHA384 = 4,
  HQ_SHA512 = 5,
  HQ_SHA3_256 = 6,
  HQ_SHA3_512 = 7,
  HQ_SHAKE128 = 8,
  HQ_SHAKE256 = 9,
  HQ_ASCON_HASH256 = 10,
  HQ_ASCON_XOF128 = 11,
  HQ_ASCON_CXOF128 = 12,
  HQ_ASCONHASHV12 = 13,
  HQ_ASCONHASHAV12 = 14,
  HQ_ASCONXOFV12 = 15,
  HQ_ASCONXOFAV12 = 16,
  HQ_MD5 = 17,
  HQ_CRC32 = 18,
  HQ_CRC32C = 19,
  HQ_CRC64NVME = 20,
  HQ_XOODYAK = 21,
  HQ_ESCH256 = 22,
  HQ_ESCH384 = 23,
  HQ_ROMULUSH = 24,
  HQ_PHOTONBEETLEHASH256 = 25,
  HQ_ID_LIMIT = 26
};

/* CPU features (dispatch.c fills them in once). */
enum hq_cpu {
  HQ_CPU_X86_SSSE3 = 1u << 0,
  HQ_CPU_X86_SSE41 = 1u << 1,
  HQ_CPU_X86_SSE42 = 1u << 2,
  HQ_CPU_X86_SHA = 1u << 3,
  HQ_CPU_X86_BMI1 = 1u << 4,
  HQ_CPU_X86_BMI2 = 1u << 5,
  HQ_CPU_X86_PCLMUL = 1u << 6,
  HQ_CPU_X86_AVX2 = 1u << 7,   /* only when the OS saves the YMM registers */
  HQ_CPU_X86_VPCLMUL = 1u << 8, /* VPCLMULQDQ on YMM, same OS condition */
  HQ_CPU_X86_AVX512VL = 1u << 9, /* AVX-512F + VL, OS saves ZMM/opmask */
  HQ_CPU_ARM_SHA1 = 1u << 12,
  HQ_CPU_ARM_SHA2 = 1u << 13,
  HQ_CPU_ARM_SHA512 = 1u << 14,
  HQ_CPU_ARM_CRC32 = 1u << 15,
  HQ_CPU_ARM_PMULL = 1u << 16,
  HQ_CPU_RV_ZBB = 1u << 20,
  HQ_CPU_RV_ZKNH = 1u << 21,
  HQ_CPU_RV_ZBC = 1u << 22
};

/* The context. Plain data, no pointers (copyable with memcpy, shareable
 * with JavaScript as bytes). Host byte order: it never leaves the process
 * except through hq_serialize. */
struct hq_ctx {
  uint32_t algo;       /* enum hq_id */
  uint32_t buffered;   /* bytes in buf */
  uint64_t total;      /* message bytes absorbed, buffered ones included */
  uint32_t outlen;     /* default output length */
  uint32_t custom_len; /* length of the customization string (CXOF) */
  union {
    uint64_t w64[HQ_STATE_BYTES / 8];
    uint32_t w32[HQ_STATE_BYTES / 4];
    uint8_t b[HQ_STATE_BYTES];
  } s; /* chaining value or sponge state; meaning per algorithm */
  uint8_t buf[HQ_MAX_BLOCK]; /* partial block */
};

typedef struct hq_algo hq_algo;
struct hq_algo {
  hq_info info;
  /* Serialized part of s: state_words words of word_size (1, 4 or 8)
   * bytes, taken from s.b / s.w32 / s.w64, written little-endian. */
  uint8_t word_size;
  uint8_t state_words;
  /* 1 when the last block is processed differently from the others even
   * when it is full (many LWC modes): the core then keeps a full block
   * buffered until more input arrives, so 1 <= buffered <= block_len
   * once any byte was absorbed. */
  uint8_t lazy;
  void (*init)(hq_ctx *c, const uint8_t *custom, size_t custom_len);
  void (*blocks)(hq_ctx *c, const uint8_t *in, size_t nblocks);
  void (*final)(hq_ctx *c, uint8_t *out, size_t outlen);
  void (*select)(hq_algo *self, uint32_t cpu);
  /* Optional extra validation of a loaded state: 0 if valid. */
  int (*check)(const hq_ctx *c);
  const char *impl; /* set by select; "portable" by default */
  /* Optional: all of hq_hash for a message without customization string,
   * outlen already validated (a one-shot that skips the context). */
  void (*oneshot)(const uint8_t *in, size_t len, uint8_t *out, size_t outlen);
  /* Optional, set by select: n blocks of each of two independent messages
   * at once (interleaved where one message leaves the unit idle); NULL when
   * the path has none. Two contexts pair in hq_update2 when they have the
   * same blocks2. */
  void (*blocks2)(hq_ctx *a, const uint8_t *ina, hq_ctx *b,
                  const uint8_t *inb, size_t nblocks);
};

/* Every algorithm, by the name of its hq_algo_<name> (defined in its family
 * file); registry.c builds the table from this list. */
#define HQ_ALGOS(X)                                                        \
  X(sha1) X(sha224) X(sha256) X(sha384) X(sha512) X(sha3_256) X(sha3_512)  \
  X(shake128) X(shake256) X(ascon_hash256) X(ascon_xof128)                 \
  X(ascon_cxof128) X(asconhashv12) X(asconhashav12) X(asconxofv12)         \
  X(asconxofav12) X(md5) X(crc32) X(crc32c) X(crc64nvme) X(xoodyak)        \
  X(esch256) X(esch384) X(romulush) X(photonbeetlehash256)
#define HQ_DECLARE_ALGO(n) extern hq_algo hq_algo_##n;
HQ_ALGOS(HQ_DECLARE_ALGO)
#undef HQ_DECLARE_ALGO

/* Registry (registry.c). NULL for ids with no implementation. */
hq_algo *hq_algo_by_id(int id);
/* Runs every algorithm's select for the CPU features `cpu` (registry.c). */
void hq_dispatch_select_all(uint32_t cpu);
/* CRC-32C as hq_crc32c, on the CRC instruction where dispatch found one
 * (crc32c_algo.c); for the short inputs of the state checksum. */
uint32_t hq_crc32c_short(uint32_t crc, const uint8_t *p, size_t n);
/* Builds the table hq_crc32c reads (crc32c.c); idempotent. */
void hq_crc32c_init_tables(void);

/* Prefetches the HQ_COLD_STEP bytes HQ_COLD_AHEAD past `at` (hq_update_cold
 * and the mapped file reads, one step at a time). A prefetch past the
 * input's end is harmless: it never faults. */
static inline void hq_prefetch_step(const uint8_t *at) {
  for (size_t k = 0; k < HQ_COLD_STEP; k += 64)
    __builtin_prefetch(at + HQ_COLD_AHEAD + k, 0, 3);
}

/* Byte-order helpers: every serialized integer goes through these. */
static inline uint32_t hq_load32_le(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}
static inline uint32_t hq_load32_be(const uint8_t *p) {
  return (uint32_t)p[3] | (uint32_t)p[2] << 8 | (uint32_t)p[1] << 16 |
         (uint32_t)p[0] << 24;
}
static inline uint64_t hq_load64_le(const uint8_t *p) {
  return (uint64_t)hq_load32_le(p) | (uint64_t)hq_load32_le(p + 4) << 32;
}
static inline uint64_t hq_load64_be(const uint8_t *p) {
  return (uint64_t)hq_load32_be(p) << 32 | (uint64_t)hq_load32_be(p + 4);
}
static inline void hq_store32_le(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}
static inline void hq_store32_be(uint8_t *p, uint32_t v) {
  p[3] = (uint8_t)v; p[2] = (uint8_t)(v >> 8);
  p[1] = (uint8_t)(v >> 16); p[0] = (uint8_t)(v >> 24);
}
static inline void hq_store64_le(uint8_t *p, uint64_t v) {
  hq_store32_le(p, (uint32_t)v); hq_store32_le(p + 4, (uint32_t)(v >> 32));
}
static inline void hq_store64_be(uint8_t *p, uint64_t v) {
  hq_store32_be(p, (uint32_t)(v >> 32)); hq_store32_be(p + 4, (uint32_t)v);
}
static inline uint32_t hq_rotl32(uint32_t x, unsigned n) {
  return (x << (n & 31)) | (x >> ((32 - n) & 31));
}
static inline uint32_t hq_rotr32(uint32_t x, unsigned n) {
  return (x >> (n & 31)) | (x << ((32 - n) & 31));
}
static inline uint64_t hq_rotl64(uint64_t x, unsigned n) {
  return (x << (n & 63)) | (x >> ((64 - n) & 63));
}
static inline uint64_t hq_rotr64(uint64_t x, unsigned n) {
  return (x >> (n & 63)) | (x << ((64 - n) & 63));
}

#if defined(__x86_64__) || defined(_M_X64)
#define HQ_X86_64 1
#endif
#if defined(__aarch64__)
#define HQ_ARM64 1
#endif
#if defined(__riscv) && __riscv_xlen == 64
#define HQ_RISCV64 1
#endif

/*
 * Round constants shared by a family's portable file and its ISA variants
 * (FIPS 180-4 §4.2.2, §4.2.3; defined in sha256.c and sha512.c).
 */
extern const uint32_t hq_sha256_k[64];
extern const uint64_t hq_sha512_k[80];

/*
 * The ISA variants: one file each, defined only on their architecture and
 * picked by the family's select when dispatch reports the CPU features.
 * blocks: n whole blocks into c (hq_algo.blocks); blocks2: n blocks of each
 * of two messages (hq_algo.blocks2).
 */
#if defined(HQ_X86_64)
/* SHA extensions (sha1_shani.c, sha256_shani.c) */
void hq_sha1_blocks_shani(hq_ctx *c, const uint8_t *in, size_t n);
void hq_sha1_blocks2_shani(hq_ctx *a, const uint8_t *ina, hq_ctx *b,
                           const uint8_t *inb, size_t n);
void hq_sha256_blocks_shani(hq_ctx *c, const uint8_t *in, size_t n);
void hq_sha256_blocks2_shani(hq_ctx *a, const uint8_t *ina, hq_ctx *b,
                             const uint8_t *inb, size_t n);
/* AVX2 + BMI2 and AVX-512VL message schedule (sha512_avx2.c) */
void hq_sha512_blocks_avx2(hq_ctx *c, const uint8_t *in, size_t n);
void hq_sha512_blocks_avx512vl(hq_ctx *c, const uint8_t *in, size_t n);
/* Keccak-f[1600]: f1600 permutes s once; blocks_rN absorb at rate N bytes
 * (BMI1/BMI2: keccak_bmi.c; AVX-512VL: keccak_avx512.c) */
void hq_keccak_f1600_bmi(uint64_t *s);
void hq_keccak_blocks_r72_bmi(hq_ctx *c, const uint8_t *in, size_t n);
void hq_keccak_blocks_r136_bmi(hq_ctx *c, const uint8_t *in, size_t n);
void hq_keccak_blocks_r168_bmi(hq_ctx *c, const uint8_t *in, size_t n);
void hq_keccak_f1600_avx512(uint64_t *s);
void hq_keccak_blocks_r72_avx512(hq_ctx *c, const uint8_t *in, size_t n);
void hq_keccak_blocks_r136_avx512(hq_ctx *c, const uint8_t *in, size_t n);
void hq_keccak_blocks_r168_avx512(hq_ctx *c, const uint8_t *in, size_t n);
/* Ascon with BMI1/BMI2 (ascon_bmi.c): the permutation, and the block loops
 * by byte order and rounds (le12: SP 800-232; be12, be8: v1.2) */
void hq_ascon_permute_bmi(uint64_t *s, int rounds);
void hq_ascon_blocks_le12_bmi(hq_ctx *c, const uint8_t *in, size_t n);
void hq_ascon_blocks_be12_bmi(hq_ctx *c, const uint8_t *in, size_t n);
void hq_ascon_blocks_be8_bmi(hq_ctx *c, const uint8_t *in, size_t n);
#endif

#if defined(HQ_ARM64)
/* ARMv8 cryptography extensions (sha1_armv8.c, sha256_armv8.c) */
void hq_sha1_blocks_armv8(hq_ctx *c, const uint8_t *in, size_t n);
void hq_sha256_blocks_armv8(hq_ctx *c, const uint8_t *in, size_t n);
#endif

/* riscv64 paths (riscv_features.c, *_rv64.c for rv64gc, *_zbb.c and
 * *_zknh.c built with their own -march and chosen at load time). */
#if defined(HQ_RISCV64)
/* rv64gc promises no fast misaligned loads: the paths read whole words
 * only where the input is 8-byte aligned (little-endian host). */
static inline uint64_t hq_load64_le_aligned(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, __builtin_assume_aligned(p, 8), 8);
  return v;
}
static inline void hq_store64_le_aligned(uint8_t *p, uint64_t v) {
  memcpy(__builtin_assume_aligned(p, 8), &v, 8);
}
static inline int hq_aligned8(const void *p) { return ((uintptr_t)p & 7) == 0; }
uint32_t hq_riscv_features(void);
void hq_keccak_f1600_rv64(uint64_t *s);
void hq_keccak_blocks_r72_rv64(hq_ctx *c, const uint8_t *in, size_t n);
void hq_keccak_blocks_r136_rv64(hq_ctx *c, const uint8_t *in, size_t n);
void hq_keccak_blocks_r168_rv64(hq_ctx *c, const uint8_t *in, size_t n);
void hq_keccak_f1600_zbb(uint64_t *s);
void hq_keccak_blocks_r72_zbb(hq_ctx *c, const uint8_t *in, size_t n);
void hq_keccak_blocks_r136_zbb(hq_ctx *c, const uint8_t *in, size_t n);
void hq_keccak_blocks_r168_zbb(hq_ctx *c, const uint8_t *in, size_t n);
void hq_ascon_permute_rv64(uint64_t *s, int rounds);
void hq_ascon_blocks_le12_rv64(hq_ctx *c, const uint8_t *in, size_t n);
void hq_ascon_blocks_be12_rv64(hq_ctx *c, const uint8_t *in, size_t n);
void hq_ascon_blocks_be8_rv64(hq_ctx *c, const uint8_t *in, size_t n);
void hq_ascon_permute_zbb(uint64_t *s, int rounds);
void hq_ascon_blocks_le12_zbb(hq_ctx *c, const uint8_t *in, size_t n);
void hq_ascon_blocks_be12_zbb(hq_ctx *c, const uint8_t *in, size_t n);
void hq_ascon_blocks_be8_zbb(hq_ctx *c, const uint8_t *in, size_t n);
void hq_sha256_blocks_zbb(hq_ctx *c, const uint8_t *in, size_t n);
void hq_sha256_blocks_zknh(hq_ctx *c, const uint8_t *in, size_t n);
void hq_sha512_blocks_zbb(hq_ctx *c, const uint8_t *in, size_t n);
void hq_sha512_blocks_zknh(hq_ctx *c, const uint8_t *in, size_t n);
#endif

#endif
