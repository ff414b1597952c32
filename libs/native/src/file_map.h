/*
 * Between file_io.c and file_map.c: long ranges of a regular file hashed
 * from a mapping of the page cache (64-bit Linux), the rest with pread.
 */
#ifndef HASHQ_FILE_MAP_H
#define HASHQ_FILE_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "hashq.h"

/* Ranges at least this long are mapped; below it pread's copy costs less
 * than setting up and tearing down a mapping. */
#define HQ_MAP_MIN_BYTES ((uint64_t)1 << 20)

/* Absorbs p[0..n) into every context (two of a kind interleaved). */
void hq_absorb(hq_ctx *const *ctxs, size_t count, const uint8_t *p, size_t n);

/* Absorbs a prefix of [offset, offset + length) of fd from a mapping and
 * returns its length: all of the range, or less when the file is shorter,
 * shrank under the mapping, or cannot be mapped (not a regular file, no
 * mapping on this platform: 0). The contexts then hold exactly that prefix;
 * the caller reads the rest with pread, which finds the end of file or the
 * errno. Negative: a negated errno that pread would not see (ENOMEM). */
int64_t hq_update_mapped(hq_ctx *const *ctxs, size_t count, int fd,
                         uint64_t offset, uint64_t length);

#endif /* HASHQ_FILE_MAP_H */
