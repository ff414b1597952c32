/*
 * Generic streaming core: buffering of partial blocks and byte counting for
 * every algorithm, so family files only see whole blocks.
 */
#include "internal.h"

int hq_init(hq_ctx *c, int id, const uint8_t *custom, size_t custom_len,
            uint32_t outlen) {
  const hq_algo *a = hq_algo_by_id(id);
  if (!a) return -HQ_ERR_UNKNOWN_ALGORITHM;
  if (custom_len && !a->info.customizable) return -HQ_ERR_BAD_ARGUMENT;
  if (custom_len > HQ_CUSTOM_MAX) return -HQ_ERR_BAD_ARGUMENT;
  if (outlen && !a->info.xof && outlen != a->info.digest_len)
    return -HQ_ERR_BAD_ARGUMENT;
  if (outlen > HQ_DEFAULT_OUTLEN_MAX) return -HQ_ERR_BAD_ARGUMENT;
  memset(c, 0, sizeof *c);
  c->algo = (uint32_t)id;
  c->outlen = outlen ? outlen : a->info.digest_len;
  c->custom_len = (uint32_t)custom_len;
  a->init(c, custom, custom_len);
  return HQ_OK;
}

void hq_update(hq_ctx *c, const uint8_t *in, size_t len) {
  const hq_algo *a = hq_algo_by_id((int)c->algo);
  size_t bl = a->info.block_len;
  if (!len) return;
  c->total += len;
  if (bl == 1) { /* stream ciphers of the checksum kind: no buffering */
    a->blocks(c, in, len);
    return;
  }
  if (c->buffered) {
    size_t take = bl - c->buffered;
    if (take > len) take = len;
    memcpy(c->buf + c->buffered, in, take);
    c->buffered += (uint32_t)take;
    in += take;
    len -= take;
    if (c->buffered < bl || (a->lazy && len == 0)) return;
    a->blocks(c, c->buf, 1);
    c->buffered = 0;
  }
  size_t n = len / bl;
  if (a->lazy && n && n * bl == len) n--; /* keep the last block */
  if (n) {
    a->blocks(c, in, n);
    in += n * bl;
    len -= n * bl;
  }
  if (len) memcpy(c->buf, in, len);
  c->buffered = (uint32_t)len;
}

/* Absorbs a's bytes until a is at a block boundary (or in runs out). */
static void to_boundary(hq_ctx *c, size_t bl, const uint8_t **in, size_t *len) {
  if (!c->buffered || !*len) return;
  size_t take = bl - c->buffered;
  if (take > *len) take = *len;
  hq_update(c, *in, take);
  *in += take;
  *len -= take;
}

void hq_update_cold(hq_ctx *c, const uint8_t *in, size_t len) {
  for (size_t at = 0; at < len; at += HQ_COLD_STEP) {
    hq_prefetch_step(in + at);
    hq_update(c, in + at, len - at < HQ_COLD_STEP ? len - at : HQ_COLD_STEP);
  }
}

int hq_pairable(const hq_ctx *a, const hq_ctx *b) {
  const hq_algo *x = hq_algo_by_id((int)a->algo);
  const hq_algo *y = hq_algo_by_id((int)b->algo);
  return a != b && x && y && x->blocks2 && x->blocks2 == y->blocks2;
}

void hq_update2(hq_ctx *a, const uint8_t *ina, size_t lena, hq_ctx *b,
                const uint8_t *inb, size_t lenb) {
  if (!hq_pairable(a, b)) {
    hq_update(a, ina, lena);
    hq_update(b, inb, lenb);
    return;
  }
  const hq_algo *x = hq_algo_by_id((int)a->algo);
  size_t bl = x->info.block_len; /* the same block function: the same size */
  to_boundary(a, bl, &ina, &lena);
  to_boundary(b, bl, &inb, &lenb);
  /* Each context now has nothing buffered or nothing left to absorb (the
   * paired functions are not lazy), so whole blocks can go straight in. */
  size_t n = lena / bl < lenb / bl ? lena / bl : lenb / bl;
  if (n) {
    x->blocks2(a, ina, b, inb, n);
    a->total += n * bl;
    b->total += n * bl;
    ina += n * bl, lena -= n * bl;
    inb += n * bl, lenb -= n * bl;
  }
  hq_update(a, ina, lena);
  hq_update(b, inb, lenb);
}

long hq_final(const hq_ctx *c, uint8_t *out, size_t outlen) {
  const hq_algo *a = hq_algo_by_id((int)c->algo);
  hq_ctx scratch;
  if (!a) return -HQ_ERR_STATE_INVALID;
  if (!outlen) outlen = c->outlen;
  if (!a->info.xof && outlen != a->info.digest_len) return -HQ_ERR_BAD_ARGUMENT;
  if (outlen > HQ_OUTLEN_MAX) return -HQ_ERR_BAD_ARGUMENT;
  memcpy(&scratch, c, sizeof scratch);
  a->final(&scratch, out, outlen);
  memset(&scratch, 0, sizeof scratch);
  return (long)outlen;
}

long hq_hash(int id, const uint8_t *data, size_t len, const uint8_t *custom,
             size_t custom_len, uint8_t *out, size_t outlen) {
  const hq_algo *o = hq_algo_by_id(id);
  if (o && o->oneshot && !custom_len) {
    if (!outlen) outlen = o->info.digest_len;
    if (!o->info.xof && outlen != o->info.digest_len) return -HQ_ERR_BAD_ARGUMENT;
    if (outlen > HQ_OUTLEN_MAX) return -HQ_ERR_BAD_ARGUMENT;
    o->oneshot(data, len, out, outlen);
    return (long)outlen;
  }
  hq_ctx c;
  int rc = hq_init(&c, id, custom, custom_len, 0);
  if (rc) return rc;
  hq_update(&c, data, len);
  const hq_algo *a = hq_algo_by_id(id);
  if (!outlen) outlen = c.outlen;
  if (!a->info.xof && outlen != a->info.digest_len) return -HQ_ERR_BAD_ARGUMENT;
  if (outlen > HQ_OUTLEN_MAX) return -HQ_ERR_BAD_ARGUMENT;
  a->final(&c, out, outlen); /* c is ours: no need for a scratch copy */
  return (long)outlen;
}

int hq_ctx_algorithm(const hq_ctx *c) { return (int)c->algo; }
uint64_t hq_ctx_bytes(const hq_ctx *c) { return c->total; }
uint32_t hq_ctx_outlen(const hq_ctx *c) { return c->outlen; }

typedef char hq_ctx_fits[sizeof(hq_ctx) <= HQ_CTX_SIZE ? 1 : -1];
