/*
 * Long ranges of a regular file hashed from a mapping of the page cache
 * (64-bit Linux): no copy into a buffer, and the bytes a few KiB ahead are
 * prefetched while these are hashed (hq_update_cold: README, "Mapped
 * reads", has the figures).
 *
 * A page of the mapping past the end of a file that shrank under it raises
 * SIGBUS. A handler, installed once and chaining to the one before it,
 * recognises a fault inside a mapping a thread here is reading (slots by
 * thread id: no thread-local storage in a signal handler) and jumps back;
 * the contexts are saved before every piece and restored to the start of
 * the piece that faulted, so they hold exactly the bytes counted, and pread
 * goes on from there as if nothing had been mapped. Any other SIGBUS gets
 * the previous handler, or the default action, as before.
 */
#define _GNU_SOURCE 1

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_map.h"
#include "hashq_testing.h"
#include "internal.h"

#if defined(__linux__) && UINTPTR_MAX > 0xffffffffu
#define HQ_FILE_MAP 1
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#endif

/* Bytes mapped at a time: bounds the file pages the process maps. */
#define MAP_WINDOW ((size_t)8 << 20)
/* The contexts are saved before each piece (a fault rolls back to it). */
#define MAP_PIECE ((size_t)256 << 10)

static _Atomic int map_enabled = 1;
static void (*_Atomic map_hook)(int fd, void *arg);
static void *_Atomic map_hook_arg;

void hq_testing_file_map(int enabled, void (*on_mapped)(int fd, void *arg),
                         void *arg) {
  atomic_store(&map_hook_arg, arg);
  atomic_store(&map_hook, on_mapped);
  atomic_store(&map_enabled, enabled != 0);
}

#if defined(HQ_FILE_MAP)

struct map_guard {
  sigjmp_buf jump;
  const uint8_t *lo, *hi; /* the mapping being read */
};

/* One slot per thread inside a mapped read: more readers than slots read
 * with pread. */
#define MAP_SLOTS 64
static struct {
  _Atomic int tid;
  struct map_guard *_Atomic guard;
} map_slots[MAP_SLOTS];

static struct sigaction previous_bus;
static pthread_once_t bus_once = PTHREAD_ONCE_INIT;
static int bus_installed;

static int thread_id(void) { return (int)syscall(SYS_gettid); }

static void on_sigbus(int sig, siginfo_t *si, void *uctx) {
  int tid = thread_id();
  for (int i = 0; i < MAP_SLOTS; i++) {
    if (atomic_load(&map_slots[i].tid) != tid) continue;
    struct map_guard *g = atomic_load(&map_slots[i].guard);
    const uint8_t *at = (const uint8_t *)si->si_addr;
    if (g && si->si_code > 0 && at >= g->lo && at < g->hi)
      siglongjmp(g->jump, 1);
    break;
  }
  /* not ours: as if this handler had never been installed */
  if (previous_bus.sa_flags & SA_SIGINFO) {
    previous_bus.sa_sigaction(sig, si, uctx);
  } else if (previous_bus.sa_handler != SIG_DFL &&
             previous_bus.sa_handler != SIG_IGN) {
    previous_bus.sa_handler(sig);
  } else if (previous_bus.sa_handler == SIG_DFL || si->si_code > 0) {
    /* the default action: a fault repeats when this returns, a signal sent
     * by kill is sent again (delivered once this handler returns) */
    signal(SIGBUS, SIG_DFL);
    if (si->si_code <= 0) raise(SIGBUS);
  }
}

static void install_bus(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigbus;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  bus_installed = sigaction(SIGBUS, &sa, &previous_bus) == 0;
}

/* The handler is in place (someone may have replaced it since). */
static int bus_ready(void) {
  struct sigaction now;
  pthread_once(&bus_once, install_bus);
  if (!bus_installed || sigaction(SIGBUS, NULL, &now) != 0) return 0;
  return (now.sa_flags & SA_SIGINFO) && now.sa_sigaction == on_sigbus;
}

static int claim_slot(int tid) {
  for (int i = 0; i < MAP_SLOTS; i++) {
    int free_tid = 0;
    if (atomic_compare_exchange_strong(&map_slots[i].tid, &free_tid, tid))
      return i;
  }
  return -1;
}

/* Absorbs map[lead, lead + len) piece by piece; the contexts are saved in
 * `saved` before each piece. Returns the bytes absorbed: len, or the start
 * of the piece that faulted (contexts restored to it). */
static size_t absorb_window(hq_ctx *const *ctxs, size_t count, uint8_t *saved,
                            struct map_guard *guard, const uint8_t *p,
                            size_t len) {
  volatile size_t done = 0;
  if (sigsetjmp(guard->jump, 1)) {
    for (size_t i = 0; i < count; i++)
      memcpy(ctxs[i], saved + i * HQ_CTX_SIZE, HQ_CTX_SIZE);
    return done;
  }
  while (done < len) {
    size_t piece = len - done < MAP_PIECE ? len - done : MAP_PIECE;
    const uint8_t *q = p + done;
    for (size_t i = 0; i < count; i++)
      memcpy(saved + i * HQ_CTX_SIZE, ctxs[i], HQ_CTX_SIZE);
    /* as hq_update_cold does, for every context at each step */
    for (size_t at = 0; at < piece; at += HQ_COLD_STEP) {
      hq_prefetch_step(q + at);
      hq_absorb(ctxs, count, q + at,
                piece - at < HQ_COLD_STEP ? piece - at : HQ_COLD_STEP);
    }
    done += piece;
  }
  return done;
}

int64_t hq_update_mapped(hq_ctx *const *ctxs, size_t count, int fd,
                         uint64_t offset, uint64_t length) {
  struct stat st;
  if (!atomic_load(&map_enabled)) return 0;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  if ((uint64_t)st.st_size <= offset) return 0;
  if (length > (uint64_t)st.st_size - offset)
    length = (uint64_t)st.st_size - offset;
  if (length < HQ_MAP_MIN_BYTES || !bus_ready()) return 0;

  int tid = thread_id();
  int slot = claim_slot(tid);
  if (slot < 0) return 0;
  uint8_t *saved = malloc(count * HQ_CTX_SIZE);
  struct map_guard *guard = malloc(sizeof *guard);
  uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
  uint64_t done = 0;
  if (!saved || !guard) {
    free(saved);
    free(guard);
    atomic_store(&map_slots[slot].tid, 0);
    return -ENOMEM;
  }
  void (*hook)(int, void *) = atomic_load(&map_hook);
  while (done < length) {
    uint64_t at = offset + done;
    uint64_t lead = at % page;
    size_t len = length - done < MAP_WINDOW ? (size_t)(length - done)
                                            : MAP_WINDOW;
    uint8_t *map = mmap(NULL, lead + len, PROT_READ, MAP_SHARED, fd,
                        (off_t)(at - lead));
    if (map == MAP_FAILED) break; /* pread takes over */
    madvise(map, lead + len, MADV_SEQUENTIAL);
    if (hook) hook(fd, atomic_load(&map_hook_arg));
    guard->lo = map;
    guard->hi = map + lead + len;
    atomic_store(&map_slots[slot].guard, guard);
    size_t got = absorb_window(ctxs, count, saved, guard, map + lead, len);
    atomic_store(&map_slots[slot].guard, NULL);
    munmap(map, lead + len);
    done += got;
    if (got < len) break; /* the file shrank: pread finds where it ends */
  }
  atomic_store(&map_slots[slot].tid, 0);
  free(saved);
  free(guard);
  return (int64_t)done;
}

#else

int64_t hq_update_mapped(hq_ctx *const *ctxs, size_t count, int fd,
                         uint64_t offset, uint64_t length) {
  (void)ctxs;
  (void)count;
  (void)fd;
  (void)offset;
  (void)length;
  return 0;
}

#endif
