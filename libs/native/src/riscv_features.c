/*
 * riscv64: which of the extensions our paths use (Zbb, Zknh, Zbc) the CPU
 * has. The riscv_hwprobe system call (Linux 6.4+) answers where the kernel
 * knows the extension; otherwise (older kernels, qemu-user 7.2) one
 * instruction of the extension is executed under a SIGILL handler, once.
 * The Zknh paths also use Zbb, so dispatch takes Zknh only beside Zbb.
 */
#define _GNU_SOURCE
#include "internal.h"

#if defined(HQ_RISCV64) && defined(__linux__)
#include <setjmp.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_riscv_hwprobe
#define __NR_riscv_hwprobe 258
#endif
/* Linux uapi asm/hwprobe.h */
#define HWPROBE_KEY_IMA_EXT_0 4
#define HWPROBE_EXT_ZBB (1ull << 4)
#define HWPROBE_EXT_ZBC (1ull << 7)
#define HWPROBE_EXT_ZKNH (1ull << 13)

struct hwprobe_pair {
  int64_t key;
  uint64_t value;
};

static uint64_t hwprobe_ext(void) {
  struct hwprobe_pair p = {HWPROBE_KEY_IMA_EXT_0, 0};
  if (syscall(__NR_riscv_hwprobe, &p, 1, 0, NULL, 0) != 0 || p.key < 0) return 0;
  return p.value;
}

static sigjmp_buf probe_env;

static void on_sigill(int sig) {
  (void)sig;
  siglongjmp(probe_env, 1);
}

/* Runs one instruction of the extension (encoded with .insn, as this file
 * is built for rv64gc): 1 if it executed, 0 if it raised SIGILL. */
static int executes(int which) {
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigill;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGILL, &sa, &old) != 0) return 0;
  volatile int ok = 0;
  if (sigsetjmp(probe_env, 1) == 0) {
    uint64_t x = 1;
    if (which == HQ_CPU_RV_ZBB) /* ror x, x, x */
      __asm__ volatile(".insn r 0x33, 5, 0x30, %0, %0, %0" : "+r"(x));
    else if (which == HQ_CPU_RV_ZKNH) /* sha256sig0 x, x */
      __asm__ volatile(".insn i 0x13, 1, %0, %0, 0x102" : "+r"(x));
    else /* clmul x, x, x */
      __asm__ volatile(".insn r 0x33, 1, 0x05, %0, %0, %0" : "+r"(x));
    ok = 1;
  }
  sigaction(SIGILL, &old, NULL);
  return ok;
}

uint32_t hq_riscv_features(void) {
  static const struct {
    uint32_t bit;
    uint64_t hwprobe;
  } ext[] = {{HQ_CPU_RV_ZBB, HWPROBE_EXT_ZBB},
             {HQ_CPU_RV_ZKNH, HWPROBE_EXT_ZKNH},
             {HQ_CPU_RV_ZBC, HWPROBE_EXT_ZBC}};
  static int done;
  static uint32_t found;
  if (done) return found;
  uint64_t probed = hwprobe_ext();
  for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++)
    if ((probed & ext[i].hwprobe) || executes((int)ext[i].bit)) found |= ext[i].bit;
  done = 1;
  return found;
}
#elif defined(HQ_RISCV64)
uint32_t hq_riscv_features(void) { return 0; }
#else
typedef int hq_riscv_features_unused; /* ISO C forbids an empty file */
#endif
