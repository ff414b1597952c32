/*
 * Shared between the CRC families (crc32.c, crc32c_algo.c, crc64nvme.c) and
 * their carry-less-multiply variant (crc_clmul.c).
 *
 * Every CRC here is reflected. Two conventions:
 *  - the *register* is the raw shift register (init and xorout not
 *    applied): hq_crc*_reg(0, m, n) is m(x)·x^w mod P;
 *  - the *value* (what ctx->s holds and serializes) is the CRC of the bytes
 *    absorbed so far, as zlib.crc32 returns it: value = ~register.
 *    It starts at 0, so a fresh context is all zeroes.
 */
#ifndef HASHQ_CRC_H
#define HASHQ_CRC_H

#include "internal.h"

/* Portable register updates (slice-by-8 tables, built by *_tables()). */
uint32_t hq_crc32_reg(uint32_t reg, const uint8_t *p, size_t n);
uint64_t hq_crc64nvme_reg(uint64_t reg, const uint8_t *p, size_t n);
void hq_crc32_tables(void);
void hq_crc64nvme_tables(void);

/* Register function of a 32-bit CRC: the tables or a CRC instruction. */
typedef uint32_t (*hq_crc32_fn)(uint32_t reg, const uint8_t *p, size_t n);

#if defined(HQ_X86_64) || defined(HQ_ARM64)
/* Carry-less-multiply folding (crc_clmul.c): PCLMULQDQ + SSE4.1 on x86-64,
 * PMULL on arm64. Registers in and out; rest() reduces what is left after
 * folding; wide != 0 (only where hq_crc_clmul_wide(cpu) said so) uses
 * VPCLMULQDQ on 256-bit registers. hq_crc_clmul_setup() derives the
 * constants; call it first. */
void hq_crc_clmul_setup(void);
int hq_crc_clmul_wide(uint32_t cpu);
uint32_t hq_crc32_reg_clmul(uint32_t reg, const uint8_t *p, size_t n,
                            hq_crc32_fn rest, int wide);
uint32_t hq_crc32c_reg_clmul(uint32_t reg, const uint8_t *p, size_t n,
                             hq_crc32_fn rest, int wide);
uint64_t hq_crc64nvme_reg_clmul(uint64_t reg, const uint8_t *p, size_t n,
                                int wide);
#endif

#endif
