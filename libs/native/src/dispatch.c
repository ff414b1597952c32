/*
 * Reads the CPU's features once and lets every algorithm pick its code
 * path. HASHQ_NATIVE_IMPL=portable (read by the binding) forces the
 * portable paths so tests can cover them on any machine.
 */
#include "internal.h"
#include "hashq_testing.h"

#if defined(HQ_X86_64)
#include <cpuid.h>
#endif
#if defined(HQ_ARM64) && defined(__linux__)
#include <sys/auxv.h>
#endif

static uint32_t features;

static uint32_t detect(void) {
  uint32_t f = 0;
#if defined(HQ_X86_64)
  unsigned a, b, c, d;
  int ymm = 0; /* AVX state enabled by the OS (OSXSAVE + XCR0 bits 1, 2) */
  int zmm = 0; /* and the AVX-512 state (XCR0 bits 5, 6, 7) */
  if (__get_cpuid(1, &a, &b, &c, &d)) {
    if ((c & bit_OSXSAVE) && (c & bit_AVX)) {
      unsigned lo, hi;
      __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
      ymm = (lo & 6) == 6;
      zmm = ymm && (lo & 0xe0) == 0xe0;
    }
    if (c & bit_SSSE3) f |= HQ_CPU_X86_SSSE3;
    if (c & bit_SSE4_1) f |= HQ_CPU_X86_SSE41;
    if (c & bit_SSE4_2) f |= HQ_CPU_X86_SSE42;
    if (c & bit_PCLMUL) f |= HQ_CPU_X86_PCLMUL;
  }
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    if (b & bit_SHA) f |= HQ_CPU_X86_SHA;
    if (b & bit_BMI) f |= HQ_CPU_X86_BMI1;
    if (b & bit_BMI2) f |= HQ_CPU_X86_BMI2;
    if ((b & bit_AVX2) && ymm) f |= HQ_CPU_X86_AVX2;
    if ((c & bit_VPCLMULQDQ) && ymm) f |= HQ_CPU_X86_VPCLMUL;
    if ((b & bit_AVX512F) && (b & bit_AVX512VL) && zmm)
      f |= HQ_CPU_X86_AVX512VL;
  }
#elif defined(HQ_ARM64) && defined(__linux__)
  unsigned long hw = getauxval(AT_HWCAP);
  if (hw & (1ul << 5)) f |= HQ_CPU_ARM_SHA1;    /* HWCAP_SHA1 */
  if (hw & (1ul << 6)) f |= HQ_CPU_ARM_SHA2;    /* HWCAP_SHA2 */
  if (hw & (1ul << 7)) f |= HQ_CPU_ARM_CRC32;   /* HWCAP_CRC32 */
  if (hw & (1ul << 4)) f |= HQ_CPU_ARM_PMULL;   /* HWCAP_PMULL */
  if (hw & (1ul << 21)) f |= HQ_CPU_ARM_SHA512; /* HWCAP_SHA512 */
#elif defined(HQ_RISCV64)
  f = hq_riscv_features();
#endif
  return f;
}

void hq_dispatch_init(int force_portable) {
  hq_crc32c_init_tables();
  features = force_portable ? 0 : detect();
  hq_dispatch_select_all(features);
}

void hq_dispatch_init_hiding(uint32_t hidden) {
  hq_crc32c_init_tables();
  features = detect() & ~hidden;
  hq_dispatch_select_all(features);
}

uint32_t hq_cpu_features(void) { return features; }
uint32_t hq_cpu_detected(void) { return detect(); }

static const struct {
  const char *name;
  uint32_t bit;
} feature_names[] = {
    {"ssse3", HQ_CPU_X86_SSSE3},   {"sse4.1", HQ_CPU_X86_SSE41},
    {"sse4.2", HQ_CPU_X86_SSE42},  {"sha", HQ_CPU_X86_SHA},
    {"bmi1", HQ_CPU_X86_BMI1},     {"bmi2", HQ_CPU_X86_BMI2},
    {"pclmul", HQ_CPU_X86_PCLMUL}, {"avx2", HQ_CPU_X86_AVX2},
    {"vpclmul", HQ_CPU_X86_VPCLMUL}, {"avx512vl", HQ_CPU_X86_AVX512VL},
    {"sha1", HQ_CPU_ARM_SHA1},     {"sha2", HQ_CPU_ARM_SHA2},
    {"sha512", HQ_CPU_ARM_SHA512}, {"crc32", HQ_CPU_ARM_CRC32},
    {"pmull", HQ_CPU_ARM_PMULL},   {"zbb", HQ_CPU_RV_ZBB},
    {"zknh", HQ_CPU_RV_ZKNH},      {"zbc", HQ_CPU_RV_ZBC},
};
#define FEATURE_COUNT (sizeof feature_names / sizeof feature_names[0])

const char *hq_cpu_feature_name(uint32_t bit) {
  for (size_t i = 0; i < FEATURE_COUNT; i++)
    if (feature_names[i].bit == bit) return feature_names[i].name;
  return NULL;
}

int hq_cpu_feature_bits(const char *list, uint32_t *bits) {
  uint32_t out = 0;
  int position = 0;
  const char *p = list;
  while (*p) {
    while (*p == ',' || *p == ' ') p++;
    if (!*p) break;
    const char *end = p;
    while (*end && *end != ',' && *end != ' ') end++;
    size_t len = (size_t)(end - p);
    position++;
    uint32_t bit = 0;
    for (size_t i = 0; i < FEATURE_COUNT && !bit; i++) {
      const char *n = feature_names[i].name;
      size_t k = 0;
      while (k < len && n[k] && (p[k] | 0x20) == n[k]) k++;
      if (k == len && n[k] == 0) bit = feature_names[i].bit;
    }
    if (!bit) return position;
    out |= bit;
    p = end;
  }
  *bits = out;
  return 0;
}
