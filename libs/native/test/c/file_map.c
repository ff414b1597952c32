/*
 * hq_update_fd's mapped reads (src/file_map.c): ranges of a file hashed from
 * a mapping equal the same bytes hashed from memory, and a file shrunk under
 * the mapping (the SIGBUS of a page past its new end) gives exactly what
 * pread gives: the bytes up to the new end, the contexts holding just
 * those. A SIGBUS that is not a mapped read's still ends the process.
 * hq_test_file_map() returns the number of failures; the KAT driver calls
 * it.
 */
#define _GNU_SOURCE 1

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hashq_testing.h"
#include "vectors.h"

#define FILE_BYTES ((size_t)20 << 20) + 12345 /* three 8 MiB windows */

static int failures;
static long checks;
static uint8_t *data;
static char path[] = "/tmp/hashq-file-map-XXXXXX";

static void check(int ok, const char *what, long long a, long long b) {
  checks++;
  if (ok) return;
  printf("FAIL file map: %s (%lld, %lld)\n", what, a, b);
  failures++;
}

static uint64_t rng = 0x243F6A8885A308D3ull;
static uint64_t next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* (Re)writes the whole file from `data`. */
static int write_file(void) {
  int fd = open(path, O_WRONLY | O_TRUNC);
  size_t at = 0;
  if (fd < 0) return -1;
  while (at < FILE_BYTES) {
    ssize_t w = write(fd, data + at, FILE_BYTES - at);
    if (w <= 0) break;
    at += (size_t)w;
  }
  close(fd);
  return at == FILE_BYTES ? 0 : -1;
}

static const char *const algos[] = {"sha256", "sha224", "sha512", "crc64nvme"};
#define NALGOS (sizeof algos / sizeof algos[0])

/* hq_update_fd of [offset, offset + length) into `count` contexts (the
 * first `count` of algos: 2 is the interleaved pair) against the bytes
 * [offset, offset + want) hashed from memory. */
static void check_range(int fd, size_t count, uint64_t offset, uint64_t length,
                        uint64_t want, const char *what) {
  static _Alignas(16) uint8_t ctxbuf[NALGOS][HQ_CTX_SIZE];
  static _Alignas(16) uint8_t refbuf[HQ_CTX_SIZE];
  static uint8_t buf[64 << 10];
  hq_ctx *ctxs[NALGOS] = {0};
  for (size_t i = 0; i < count; i++) {
    ctxs[i] = (hq_ctx *)ctxbuf[i];
    hq_init(ctxs[i], hq_find(algos[i]), NULL, 0, 0);
    hq_update(ctxs[i], (const uint8_t *)"prefix", 6); /* a state carried in */
  }
  int64_t got = hq_update_fd(ctxs, count, fd, offset, length, buf, sizeof buf);
  check(got == (int64_t)want, what, got, (long long)want);
  for (size_t i = 0; i < count && got == (int64_t)want; i++) {
    hq_ctx *ref = (hq_ctx *)refbuf;
    uint8_t d1[64], d2[64];
    hq_init(ref, hq_find(algos[i]), NULL, 0, 0);
    hq_update(ref, (const uint8_t *)"prefix", 6);
    hq_update(ref, data + offset, (size_t)want);
    long n1 = hq_final(ctxs[i], d1, 0), n2 = hq_final(ref, d2, 0);
    check(n1 > 0 && n1 == n2 && memcmp(d1, d2, (size_t)n1) == 0, what,
          (long long)offset, (long long)i);
  }
}

/* The hook: shrinks the file to `cut_at` when the `cut_window`-th window is
 * mapped (1-based), through a descriptor of its own. */
static long long cut_at;
static int cut_window, windows_seen;
static void shrink(int fd, void *arg) {
  (void)fd;
  (void)arg;
  if (++windows_seen != cut_window) return;
  int w = open(path, O_WRONLY);
  if (w < 0 || ftruncate(w, cut_at) != 0) printf("FAIL file map: ftruncate\n");
  if (w >= 0) close(w);
}

static void check_shrunk(size_t count, uint64_t offset, long long cut, int window,
                         const char *what) {
  if (write_file() != 0) {
    check(0, "rewrite", 0, 0);
    return;
  }
  int fd = open(path, O_RDONLY);
  cut_at = cut;
  cut_window = window;
  windows_seen = 0;
  hq_testing_file_map(1, shrink, NULL);
  uint64_t want = cut > (long long)offset ? (uint64_t)cut - offset : 0;
  check_range(fd, count, offset, FILE_BYTES - offset, want, what);
  check(windows_seen >= window, "the hook ran", windows_seen, window);
  hq_testing_file_map(1, NULL, NULL);
  close(fd);
}

/* In a child: a SIGBUS that is not a mapped read's, after the handler was
 * installed by one. The child must die of it (under a sanitizer, whose own
 * handler reports it, at least not exit 0). */
static void check_foreign_sigbus(int sent) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    static uint8_t buf[4096];
    static _Alignas(16) uint8_t ctxbuf[HQ_CTX_SIZE];
    hq_ctx *ctx = (hq_ctx *)ctxbuf;
    int fd = open(path, O_RDWR);
    hq_init(ctx, hq_find("sha256"), NULL, 0, 0);
    hq_update_fd(&ctx, 1, fd, 0, 4 << 20, buf, sizeof buf); /* installs it */
    if (sent) {
      raise(SIGBUS);
    } else {
      volatile uint8_t *m = mmap(NULL, 1 << 20, PROT_READ, MAP_SHARED, fd, 0);
      if (m == MAP_FAILED || ftruncate(fd, 0) != 0) _exit(3);
      (void)m[8192]; /* past the end now */
    }
    _exit(0);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  int died = !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
#if !defined(__SANITIZE_ADDRESS__)
  died = WIFSIGNALED(st) && WTERMSIG(st) == SIGBUS;
#endif
  check(died, sent ? "a SIGBUS sent by raise() still ends the process"
                   : "a foreign fault still ends the process",
        WIFSIGNALED(st) ? WTERMSIG(st) : -1, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

int hq_test_file_map(void) {
  failures = 0;
  checks = 0;
  data = malloc(FILE_BYTES);
  int fd0 = mkstemp(path);
  if (!data || fd0 < 0) {
    printf("FAIL file map: no temporary file\n");
    return 1;
  }
  close(fd0);
  for (size_t i = 0; i < FILE_BYTES; i += 8) {
    uint64_t r = next_rand();
    memcpy(data + i, &r, FILE_BYTES - i < 8 ? FILE_BYTES - i : 8);
  }
  if (write_file() != 0) {
    printf("FAIL file map: cannot write %s\n", path);
    return 1;
  }
  int fd = open(path, O_RDONLY);
  /* whole file, unaligned starts, a range past the end, mapping off */
  for (size_t count = 1; count <= NALGOS; count++)
    check_range(fd, count, 0, FILE_BYTES, FILE_BYTES, "whole file");
  for (int round = 0; round < 12; round++) {
    uint64_t off = next_rand() % (FILE_BYTES - (2u << 20));
    uint64_t len = (1u << 20) + next_rand() % (FILE_BYTES - off - (1u << 20) + 1);
    check_range(fd, 1 + (size_t)(round % NALGOS), off, len, len, "random range");
  }
  check_range(fd, 2, FILE_BYTES - (3u << 20) + 1, 8u << 20, (3u << 20) - 1, "past the end");
  hq_testing_file_map(0, NULL, NULL);
  check_range(fd, 2, 4097, 12u << 20, 12u << 20, "mapping off: pread");
  hq_testing_file_map(1, NULL, NULL);
  close(fd);

  /* shrunk under the mapping: mid-window, on a page, in the second window,
   * before the range, inside the first page of the range */
  check_shrunk(1, 0, (3 << 20) + 77, 1, "shrunk mid-window");
  check_shrunk(2, 4096 * 3 + 5, 5 << 20, 1, "shrunk to a page boundary");
  check_shrunk(3, 1000, (10 << 20) + 4095, 2, "shrunk in the second window");
  check_shrunk(4, 2 << 20, 1 << 20, 1, "shrunk before the range");
  check_shrunk(2, (2 << 20) + 100, (2 << 20) + 4000, 1, "shrunk in the range's first page");

  if (write_file() == 0) {
    printf("file map: two children now die of SIGBUS on purpose"
           " (a sanitizer, if any, reports each)\n");
    check_foreign_sigbus(1);
    check_foreign_sigbus(0);
  }
  unlink(path);
  free(data);
  printf("file map: %ld checks, %d failed\n", checks, failures);
  return failures;
}
