/*
 * Swaps two paths atomically (renameat2 RENAME_EXCHANGE) in a tight loop: the
 * attacker of libs/sources/src/file-source.race.spec.ts. Prints "ready" after
 * the first swap, runs until killed, and ends itself after <seconds> at most.
 *
 * usage: rename-exchange <path-a> <path-b> <seconds>
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

static int exchange(const char *a, const char *b) {
  return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s <path-a> <path-b> <seconds>\n", argv[0]);
    return 2;
  }
  alarm((unsigned)atoi(argv[3]));
  if (exchange(argv[1], argv[2]) != 0) {
    perror("renameat2");
    return 1;
  }
  puts("ready");
  fflush(stdout);
  for (;;) {
    if (exchange(argv[1], argv[2]) != 0) {
      perror("renameat2");
      return 1;
    }
  }
}
