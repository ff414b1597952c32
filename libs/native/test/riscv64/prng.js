'use strict';
/** A small seeded generator (xorshift64*), so that a run can be repeated from
 * its printed seed and both architectures derive the same messages. */
function prng(seed) {
  let s = BigInt.asUintN(64, BigInt(seed) * 0x9e3779b97f4a7c15n + 1n);
  const next = () => {
    s ^= s >> 12n;
    s ^= BigInt.asUintN(64, s << 25n);
    s ^= s >> 27n;
    return Number(BigInt.asUintN(64, s * 0x2545f4914f6cdd1dn) >> 32n);
  };
  return {
    /** integer in [0, n) */
    below: (n) => next() % n,
    bytes(len) {
      const b = Buffer.alloc(len);
      for (let i = 0; i < len; i += 4) {
        const v = next();
        for (let j = 0; j < 4 && i + j < len; j++) b[i + j] = (v >>> (8 * j)) & 0xff;
      }
      return b;
    },
  };
}
module.exports = { prng };
