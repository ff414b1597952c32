/*
 * Body of the vector-schedule SHA-384/512 block functions, included by
 * sha512_avx2.c once per instruction set. The includer defines
 *   SHA512_VEC_FN      the function's name,
 *   SHA512_VEC_TARGET  its target attribute,
 *   SSIG0(x), SSIG1(x) sigma0 and sigma1 (§4.1.3) on both 64-bit lanes of an
 *                      __m128i (SSIG0 may use the local `rot8`),
 *   SHA512_VEC_CHUNK_LOOP  _Pragma("GCC unroll 1") or ("GCC unroll 4"): the
 *                      loop over chunks rolled or unrolled (which is faster
 *                      depends on the instance; see sha512_avx2.c),
 *   SHA512_VEC_ROUND   SHA512_ROUND or SHA512_ROUND_E4 (sha512_rounds.h),
 * and gets SHA512_VEC_FN(hq_ctx *, const uint8_t *in, size_t n).
 *
 * The scalar rounds of sha512_rounds.h read K[t] + W[t] from a 16-word
 * array; the 16 words of the next chunk (W[t+16..t+31], or the next block's
 * W[0..15] during rounds 64..79) are computed two at a time in vector
 * registers between the rounds of the current chunk, one step per two
 * rounds, into the other half of a 32-word buffer. Only the first block's
 * W[0..15] (a byte swap and an add) is computed before any round, so a
 * single block does no more schedule work than it needs and starts at once.
 */

/* x[j/2] holds W[t+j], W[t+j+1] of the chunk of 16 words starting at t, so
 * register names repeat per chunk. */
#define XR(j) x[((j) / 2) & 7]
/* nxt[j], nxt[j+1] = W + K for words t+j, t+j+1 (t: K index of the chunk) */
#define STORE_WK(t, j)                                                     \
  _mm_store_si128((__m128i *)(nxt + (j)),                                  \
                  _mm_add_epi64(XR(j), _mm_loadu_si128((const __m128i *)(  \
                                           hq_sha512_k + (t) + (j)))))
/* W[t+j], W[t+j+1] for t >= 16 (§6.4.2 step 1) in place of W[t+j-16],
 * W[t+j-15]: W[t+j+1] needs W[t+j-1], not W[t+j], so both lanes are
 * independent. Ring offsets: W[-15] at j+1, W[-7] at j+9, W[-2] at j+14. */
#define EXPAND2(t, j)                                                      \
  do {                                                                     \
    __m128i w15 = _mm_alignr_epi8(XR((j) + 2), XR(j), 8);                  \
    __m128i w7 = _mm_alignr_epi8(XR((j) + 10), XR((j) + 8), 8);            \
    XR(j) = _mm_add_epi64(_mm_add_epi64(XR(j), SSIG0(w15)),                \
                          _mm_add_epi64(w7, SSIG1(XR((j) + 14))));         \
    STORE_WK(t, j);                                                        \
  } while (0)
#define LOAD2(t, j)                                                        \
  do {                                                                     \
    XR(j) = _mm_shuffle_epi8(                                              \
        _mm_loadu_si128((const __m128i *)(in + 8 * (j))), bswap);          \
    STORE_WK(t, j);                                                        \
  } while (0)

#define R(a, b, c, d, e, f, g, h, k) \
  SHA512_VEC_ROUND(a, b, c, d, e, f, g, h, cur[k])

/* 16 rounds on cur[0..15], with one step (two words) of the next chunk's
 * schedule, SCHED2(t, j), after every second round. */
#define CHUNK16(SCHED2, t)                                                 \
  do {                                                                     \
    R(a, b, c, d, e, f, g, h, 0);  R(h, a, b, c, d, e, f, g, 1);          \
    SCHED2(t, 0);                                                          \
    R(g, h, a, b, c, d, e, f, 2);  R(f, g, h, a, b, c, d, e, 3);          \
    SCHED2(t, 2);                                                          \
    R(e, f, g, h, a, b, c, d, 4);  R(d, e, f, g, h, a, b, c, 5);          \
    SCHED2(t, 4);                                                          \
    R(c, d, e, f, g, h, a, b, 6);  R(b, c, d, e, f, g, h, a, 7);          \
    SCHED2(t, 6);                                                          \
    R(a, b, c, d, e, f, g, h, 8);  R(h, a, b, c, d, e, f, g, 9);          \
    SCHED2(t, 8);                                                          \
    R(g, h, a, b, c, d, e, f, 10); R(f, g, h, a, b, c, d, e, 11);         \
    SCHED2(t, 10);                                                         \
    R(e, f, g, h, a, b, c, d, 12); R(d, e, f, g, h, a, b, c, 13);         \
    SCHED2(t, 12);                                                         \
    R(c, d, e, f, g, h, a, b, 14); R(b, c, d, e, f, g, h, a, 15);         \
    SCHED2(t, 14);                                                         \
  } while (0)

SHA512_VEC_TARGET void SHA512_VEC_FN(hq_ctx *ctx, const uint8_t *in,
                                     size_t n) {
  const __m128i bswap =
      _mm_set_epi64x(0x08090a0b0c0d0e0fULL, 0x0001020304050607ULL);
  const __m128i rot8 =
      _mm_set_epi64x(0x080f0e0d0c0b0a09ULL, 0x0007060504030201ULL);
  _Alignas(16) uint64_t wk[32];
  __m128i x[8];
  uint64_t *s = ctx->s.w64, *cur = wk, *nxt = wk;
  (void)rot8;
  if (!n) return;
  {
    LOAD2(0, 0); LOAD2(0, 2); LOAD2(0, 4); LOAD2(0, 6);
    LOAD2(0, 8); LOAD2(0, 10); LOAD2(0, 12); LOAD2(0, 14);
  }
  for (;;) {
    uint64_t a = s[0], b = s[1], c = s[2], d = s[3];
    uint64_t e = s[4], f = s[5], g = s[6], h = s[7], bc = b ^ c;
    SHA512_VEC_CHUNK_LOOP
    for (int t = 16; t < 80; t += 16) {
      nxt = cur == wk ? wk + 16 : wk;
      CHUNK16(EXPAND2, t);
      cur = nxt;
    }
    /* rounds 64..79 load the next block's first 16 words; the last block
     * loads itself again (harmless) so that this loop has one branch */
    nxt = cur == wk ? wk + 16 : wk;
    if (n > 1) in += 128;
    CHUNK16(LOAD2, 0);
    cur = nxt;
    s[0] += a; s[1] += b; s[2] += c; s[3] += d;
    s[4] += e; s[5] += f; s[6] += g; s[7] += h;
    if (!--n) break;
  }
}

#undef XR
#undef STORE_WK
#undef EXPAND2
#undef LOAD2
#undef R
#undef CHUNK16
