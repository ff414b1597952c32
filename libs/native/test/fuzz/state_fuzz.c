/*
 * libFuzzer harness for the state decoder: whatever the bytes, decoding
 * must not crash or read out of bounds, and a state it accepts must behave
 * like a state: it serializes back to the same bytes, absorbs more input
 * and yields a digest.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined \
 *     ../../src/*.c state_fuzz.c -o state_fuzz && ./state_fuzz -max_total_time=600 corpus/
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/hashq.h"

static int ready;

/* Decode; if accepted, the state must behave like a state. */
static void exercise(const uint8_t *copy, size_t size) {
  _Alignas(8) uint8_t ctxbuf[HQ_CTX_SIZE];
  uint8_t again[HQ_STATE_MAX], out[64];
  hq_ctx *ctx = (hq_ctx *)ctxbuf;
  if (hq_deserialize(ctx, copy, size, -1) != 0) return;
  size_t n = hq_serialize(ctx, again);
  /* resumable-hash states are converted to our format on load */
  if (!(size == 96 || size == 112) && (n != size || memcmp(again, copy, n) != 0))
    abort();
  /* the same state also absorbs through hq_update2, beside a fresh context
   * of its algorithm (interleaved where the path pairs them): same digest */
  _Alignas(8) uint8_t twinbuf[HQ_CTX_SIZE], otherbuf[HQ_CTX_SIZE];
  uint8_t out2[64];
  hq_ctx *twin = (hq_ctx *)twinbuf, *other = (hq_ctx *)otherbuf;
  memcpy(twinbuf, ctxbuf, sizeof twinbuf);
  int paired = hq_init(other, hq_ctx_algorithm(ctx), NULL, 0, 0) == 0;
  /* a message of several blocks, made of the input repeated */
  static uint8_t msg[1024];
  size_t len = size ? 500 + size % 500 : 0;
  for (size_t i = 0; i < len; i++) msg[i] = copy[i % size];
  hq_update(ctx, msg, len);
  if (paired) hq_update2(twin, msg, len, other, msg + len / 3, len - len / 3);
  /* an XOF may carry a long default length: ask for 64 bytes then */
  size_t want = hq_ctx_outlen(ctx) <= sizeof out ? 0 : sizeof out;
  long got = hq_final(ctx, out, want);
  if (got < 0) abort();
  if (paired && (hq_final(twin, out2, want) != got || memcmp(out, out2, (size_t)got) != 0))
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!ready) {
    hq_dispatch_init(0);
    ready = 1;
  }
  /* exact-size copy, so ASan sees any read past the end */
  uint8_t *copy = malloc(size ? size : 1);
  memcpy(copy, data, size);
  exercise(copy, size);
  /* Random bytes almost never carry a valid CRC-32C; fix it up so the
   * fuzzer also reaches every semantic check behind the checksum. */
  if (size >= 8) {
    uint32_t crc = hq_crc32c(0, copy, size - 4);
    for (int i = 0; i < 4; i++) copy[size - 4 + i] = (uint8_t)(crc >> (8 * i));
    exercise(copy, size);
  }
  free(copy);
  return 0;
}
