/*
 * The serialized state, format version 1 (see ../STATE_FORMAT.md).
 * Every integer little-endian, no padding, CRC-32C over all preceding
 * bytes. The decoder validates every byte of a state before it writes the
 * context, and leaves the context zeroed when it refuses one.
 */
#include "internal.h"

#define HQ_MAGIC "HQst"
#define HQ_FORMAT_VERSION 1
#define HQ_HEADER_LEN 24

/* memcpy of at most HQ_MAX_BLOCK bytes. A plain memcpy with a length the
 * compiler knows to be small becomes rep movsq, slow to start on many CPUs;
 * eight bytes at a time is faster for these sizes. */
__attribute__((optimize("no-tree-loop-distribute-patterns"))) static void
copy_short(uint8_t *d, const uint8_t *s, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v;
    memcpy(&v, s + i, 8);
    memcpy(d + i, &v, 8);
  }
  for (; i < n; i++) d[i] = s[i];
}

/* memset(p, 0, n) for n a multiple of 8, by the same reasoning. */
__attribute__((optimize("no-tree-loop-distribute-patterns"))) static void
zero_short(uint8_t *p, size_t n) {
  const uint64_t z = 0;
  for (size_t i = 0; i < n; i += 8) memcpy(p + i, &z, 8);
}

static size_t words_len(const hq_algo *a) {
  return (size_t)a->state_words * a->word_size;
}

static void put_words(const hq_algo *a, const hq_ctx *c, uint8_t *p) {
  for (unsigned i = 0; i < a->state_words; i++) {
    if (a->word_size == 8) hq_store64_le(p + 8 * i, c->s.w64[i]);
    else if (a->word_size == 4) hq_store32_le(p + 4 * i, c->s.w32[i]);
    else p[i] = c->s.b[i];
  }
}

static void get_words(const hq_algo *a, hq_ctx *c, const uint8_t *p) {
  for (unsigned i = 0; i < a->state_words; i++) {
    if (a->word_size == 8) c->s.w64[i] = hq_load64_le(p + 8 * i);
    else if (a->word_size == 4) c->s.w32[i] = hq_load32_le(p + 4 * i);
    else c->s.b[i] = p[i];
  }
}

size_t hq_serialize(const hq_ctx *c, uint8_t *out) {
  const hq_algo *a = hq_algo_by_id((int)c->algo);
  uint8_t *p = out;
  memcpy(p, HQ_MAGIC, 4);
  p[4] = HQ_FORMAT_VERSION;
  p[5] = (uint8_t)c->algo;
  p[6] = p[7] = 0; /* flags, reserved */
  hq_store64_le(p + 8, c->total);
  hq_store32_le(p + 16, c->outlen);
  p[20] = (uint8_t)c->custom_len;
  p[21] = (uint8_t)(c->custom_len >> 8);
  p[22] = (uint8_t)c->buffered;
  p[23] = (uint8_t)(c->buffered >> 8);
  p += HQ_HEADER_LEN;
  copy_short(p, c->buf, c->buffered);
  p += c->buffered;
  put_words(a, c, p);
  p += words_len(a);
  hq_store32_le(p, hq_crc32c_short(0, out, (size_t)(p - out)));
  return (size_t)(p - out) + 4;
}

/* Is `buffered` what `total` bytes of input leave in the buffer? */
static int buffered_consistent(const hq_algo *a, uint64_t total,
                               uint32_t buffered) {
  uint64_t bl = a->info.block_len;
  if (bl == 1) return buffered == 0;
  if (!a->lazy) return buffered < bl && buffered == total % bl;
  if (total == 0) return buffered == 0;
  return buffered >= 1 && buffered <= bl && buffered == (total - 1) % bl + 1;
}

static int load_v1(hq_ctx *c, const uint8_t *in, size_t len, int expect) {
  if (in[4] > HQ_FORMAT_VERSION) return -HQ_ERR_STATE_VERSION;
  if (in[4] != HQ_FORMAT_VERSION) return -HQ_ERR_STATE_INVALID;
  const hq_algo *a = hq_algo_by_id(in[5]);
  if (!a) return -HQ_ERR_STATE_INVALID;
  uint32_t buffered = (uint32_t)in[22] | (uint32_t)in[23] << 8;
  if (buffered > a->info.block_len || buffered > HQ_MAX_BLOCK)
    return -HQ_ERR_STATE_INVALID;
  size_t need = HQ_HEADER_LEN + buffered + words_len(a) + 4;
  if (len != need) return -HQ_ERR_STATE_INVALID;
  if (hq_crc32c_short(0, in, len - 4) != hq_load32_le(in + len - 4))
    return -HQ_ERR_STATE_INVALID;
  if (expect >= 0 && expect != in[5]) return -HQ_ERR_STATE_ALGORITHM_MISMATCH;
  if (in[6] || in[7]) return -HQ_ERR_STATE_INVALID;
  uint64_t total = hq_load64_le(in + 8);
  uint32_t outlen = hq_load32_le(in + 16);
  uint32_t custom_len = (uint32_t)in[20] | (uint32_t)in[21] << 8;
  if (!buffered_consistent(a, total, buffered)) return -HQ_ERR_STATE_INVALID;
  if (a->info.xof ? (outlen == 0 || outlen > HQ_DEFAULT_OUTLEN_MAX)
                  : outlen != a->info.digest_len)
    return -HQ_ERR_STATE_INVALID;
  if (custom_len > (a->info.customizable ? HQ_CUSTOM_MAX : 0))
    return -HQ_ERR_STATE_INVALID;
  /* Every byte of the input is checked; what is left (an algorithm's own
   * check of the loaded state) sees the context itself: on failure
   * hq_deserialize zeroes it, as it does for every refused state. Filling
   * it in place, field by field, skips a zeroed 392-byte temporary and its
   * copy (GCC inlines both as rep stos/movs, slow to start: README,
   * implementation notes). */
  c->algo = in[5];
  c->buffered = buffered;
  c->total = total;
  c->outlen = outlen;
  c->custom_len = custom_len;
  zero_short(c->buf, sizeof c->buf);
  copy_short(c->buf, in + HQ_HEADER_LEN, buffered);
  zero_short(c->s.b, sizeof c->s);
  get_words(a, c, in + HQ_HEADER_LEN + buffered);
  if (a->check && a->check(c)) return -HQ_ERR_STATE_INVALID;
  return HQ_OK;
}

/*
 * resumable-hash 0.2.5 states: OpenSSL's SHA_CTX / SHA256_CTX written as
 * big-endian 32-bit words: h[5|8], Nl, Nh, data[16], num (+ md_len). The
 * data words were filled by memcpy on a little-endian host, so each word
 * holds four message bytes in reversed order.
 */
static int load_legacy(hq_ctx *c, const uint8_t *in, size_t len, int expect) {
  int id = len == 96 ? HQ_SHA1 : HQ_SHA256;
  unsigned nh = id == HQ_SHA1 ? 5 : 8;
  const uint8_t *p = in + 4 * nh;
  if (!hq_algo_by_id(id)) return -HQ_ERR_STATE_INVALID;
  if (expect >= 0 && expect != id) return -HQ_ERR_STATE_ALGORITHM_MISMATCH;
  uint64_t bits = (uint64_t)hq_load32_be(p + 4) << 32 | hq_load32_be(p);
  uint32_t num = hq_load32_be(p + 8 + 64);
  if (bits % 8 || num >= 64 || (bits / 8) % 64 != num)
    return -HQ_ERR_STATE_INVALID;
  if (id == HQ_SHA256 && hq_load32_be(p + 8 + 64 + 4) != 32)
    return -HQ_ERR_STATE_INVALID;
  hq_ctx t;
  int rc = hq_init(&t, id, NULL, 0, 0);
  if (rc) return rc;
  for (unsigned i = 0; i < nh; i++) t.s.w32[i] = hq_load32_be(in + 4 * i);
  for (unsigned i = 0; i < 16; i++) hq_store32_le(t.buf + 4 * i, hq_load32_be(p + 8 + 4 * i));
  memset(t.buf + num, 0, HQ_MAX_BLOCK - num);
  t.total = bits / 8;
  t.buffered = num;
  memcpy(c, &t, sizeof t);
  return HQ_OK;
}

int hq_deserialize(hq_ctx *c, const uint8_t *in, size_t len, int expect) {
  int rc;
  if (in && len >= HQ_HEADER_LEN + 4 && memcmp(in, HQ_MAGIC, 4) == 0)
    rc = load_v1(c, in, len, expect);
  else if (in && (len == 96 || len == 112))
    rc = load_legacy(c, in, len, expect);
  else
    rc = -HQ_ERR_STATE_INVALID;
  if (rc) memset(c, 0, sizeof *c);
  return rc;
}
