/**
 * Independent oracles: Node's crypto (OpenSSL) for the algorithms it has,
 * zlib.crc32 for CRC-32; otherwise undefined (callers then fall back to
 * the library's own one-shot, which the KAT tests check).
 */
import * as crypto from 'node:crypto';
import * as zlib from 'node:zlib';

const NODE_NAMES = new Set([
  'sha1',
  'sha224',
  'sha256',
  'sha384',
  'sha512',
  'sha3-256',
  'sha3-512',
  'md5',
]);
const NODE_XOFS = new Set(['shake128', 'shake256']);

export function hasOracle(algorithm: string): boolean {
  return NODE_NAMES.has(algorithm) || NODE_XOFS.has(algorithm) || algorithm === 'crc32';
}

export function oracle(algorithm: string, msg: Uint8Array, outLen?: number): Buffer | undefined {
  if (NODE_NAMES.has(algorithm)) return crypto.createHash(algorithm).update(msg).digest();
  if (NODE_XOFS.has(algorithm)) {
    if (outLen === undefined) throw new Error(`${algorithm}: the oracle needs an output length`);
    return crypto.createHash(algorithm, { outputLength: outLen }).update(msg).digest();
  }
  if (algorithm === 'crc32') {
    const out = Buffer.alloc(4);
    out.writeUInt32BE(zlib.crc32(msg) >>> 0);
    return out;
  }
  return undefined;
}

/** Deterministic PRNG (mulberry32), so a failing case can be replayed:
 * the seed is printed with every failure. */
export function prng(seed: number): {
  next(): number;
  int(n: number): number;
  bytes(n: number): Buffer;
} {
  let s = seed >>> 0;
  const next = (): number => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n) => Math.floor(next() * n),
    bytes: (n) => {
      const b = Buffer.allocUnsafe(n);
      for (let i = 0; i < n; i++) b[i] = Math.floor(next() * 256);
      return b;
    },
  };
}

export const TEST_SEED = Number(process.env.HASHQ_TEST_SEED ?? Date.now() % 2 ** 31);
