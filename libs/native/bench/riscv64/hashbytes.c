/*
 * Hashes N bytes with one algorithm of the core, once, for counting executed
 * instructions under qemu (bench.js). `hashbytes <algorithm> <bytes>
 * [offset]`: the message starts `offset` bytes (0..7) into an 8-byte aligned
 * buffer; bytes = -1 does everything but the hash call, the baseline that
 * is subtracted.
 * The message buffer is always the largest size and always filled, so that
 * runs differ only in the hashing itself. `hashbytes --list` prints the
 * algorithm names and their dispatched paths.
 */
#include <stdio.h>
#include <stdlib.h>

#include "hashq.h"

#define MAX_BYTES (1 << 16)

/* 8-byte aligned, as Node's Buffers are in practice: the riscv64 paths
 * read whole words only from aligned input. */
static _Alignas(8) uint8_t message[MAX_BYTES];
uint8_t digest[64]; /* global: the stores to it are observable */

int main(int argc, char **argv) {
  hq_dispatch_init(0);
  if (argc == 2 && argv[1][0] == '-') {
    for (int i = 0; i < hq_algorithm_count(); i++) {
      const hq_info *info = hq_algorithm_at(i);
      printf("%s %s\n", info->name, hq_implementation(info->id));
    }
    return 0;
  }
  if (argc != 3 && argc != 4) {
    fprintf(stderr, "usage: hashbytes <algorithm> <bytes|-1> [offset]\n");
    return 2;
  }
  long n = strtol(argv[2], NULL, 10);
  long offset = argc == 4 ? strtol(argv[3], NULL, 10) : 0;
  int id = hq_find(argv[1]);
  if (id < 0 || n < -1 || n > MAX_BYTES - 8 || offset < 0 || offset > 7) {
    fprintf(stderr, "unknown algorithm or bad size: %s %s\n", argv[1], argv[2]);
    return 2;
  }
  for (size_t i = 0; i < MAX_BYTES; i++) message[i] = (uint8_t)(i * 131 + 7);
  const hq_info *info = hq_info_of(id);
  size_t outlen = info->digest_len < sizeof digest ? info->digest_len : sizeof digest;
  if (n >= 0 && hq_hash(id, message + offset, (size_t)n, NULL, 0, digest, outlen) < 0) return 1;
  /* Nothing is printed: output formatting costs differ with the digest's
   * bytes (printf takes another path for zeros), and the hash call, in
   * another translation unit, cannot be optimized away. */
  return 0;
}
