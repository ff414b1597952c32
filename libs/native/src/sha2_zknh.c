/*
 * SHA-256 and SHA-512 for riscv64 with Zknh (sha2_rv64.h), built with
 * -march=rv64gc_zbb_zknh: each Sigma/sigma function is one instruction
 * (on RV64 the SHA-512 ones take one register), rev8 swaps bytes. GCC 12
 * has no intrinsics for them, hence the inline assembly.
 */
#if defined(__riscv) && !(defined(__riscv_zknh) && defined(__riscv_zbb))
#error "sha2_zknh.c is built with -march=rv64gc_zbb_zknh"
#endif
#include "internal.h"

#if defined(HQ_RISCV64)
#define ZKNH_OP(name, type)                                  \
  static inline type zknh_##name(type x) {                   \
    unsigned long r;                                         \
    __asm__(#name " %0, %1" : "=r"(r) : "r"(x));             \
    return (type)r;                                          \
  }
ZKNH_OP(sha256sum0, uint32_t)
ZKNH_OP(sha256sum1, uint32_t)
ZKNH_OP(sha256sig0, uint32_t)
ZKNH_OP(sha256sig1, uint32_t)
ZKNH_OP(sha512sum0, uint64_t)
ZKNH_OP(sha512sum1, uint64_t)
ZKNH_OP(sha512sig0, uint64_t)
ZKNH_OP(sha512sig1, uint64_t)
#define SHA256_BSIG0(x) zknh_sha256sum0(x)
#define SHA256_BSIG1(x) zknh_sha256sum1(x)
#define SHA256_SSIG0(x) zknh_sha256sig0(x)
#define SHA256_SSIG1(x) zknh_sha256sig1(x)
#define SHA512_BSIG0(x) zknh_sha512sum0(x)
#define SHA512_BSIG1(x) zknh_sha512sum1(x)
#define SHA512_SSIG0(x) zknh_sha512sig0(x)
#define SHA512_SSIG1(x) zknh_sha512sig1(x)
#define SHA2_RV(f) hq_##f##_zknh
#include "sha2_rv64.h"
#else
typedef int hq_sha2_zknh_unused; /* ISO C forbids an empty file */
#endif
