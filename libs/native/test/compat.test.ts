/**
 * The resumable-hash drop-in: HashType, Hash (immutable), MutableHash,
 * HashStream, its error messages, and the states resumable-hash 0.2.5
 * wrote (OpenSSL's SHA_CTX/SHA256_CTX as big-endian words).
 */
import * as crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import * as lib from '../lib';
import { Hash, HashStream, HashType, MutableHash } from '../lib';
import { prng, TEST_SEED } from './helpers/oracle';

const rnd = prng(TEST_SEED);
const sha256 = (m: Uint8Array): Buffer => crypto.createHash('sha256').update(m).digest();
const sha1 = (m: Uint8Array): Buffer => crypto.createHash('sha1').update(m).digest();

/**
 * A resumable-hash 0.2.5 state for `msg`, built from our own v1 state: the
 * chaining words (little-endian in v1, after the 24-byte header and the
 * buffered bytes) rewritten as OpenSSL's struct, big-endian words: h[],
 * Nl, Nh, data[16] (each word = four bytes reversed), num (+ md_len).
 */
function legacyState(algorithm: 'sha1' | 'sha256', msg: Buffer): Buffer {
  const v1 = lib.createHasher(algorithm).update(msg).serialize();
  const words = algorithm === 'sha1' ? 5 : 8;
  const buffered = v1.readUInt16LE(22);
  const out = Buffer.alloc(algorithm === 'sha1' ? 96 : 112);
  for (let i = 0; i < words; i++) out.writeUInt32BE(v1.readUInt32LE(24 + buffered + 4 * i), 4 * i);
  let p = 4 * words;
  const bits = BigInt(msg.length) * 8n;
  out.writeUInt32BE(Number(bits & 0xffffffffn), p);
  out.writeUInt32BE(Number(bits >> 32n), p + 4);
  p += 8;
  const data = Buffer.alloc(64);
  msg.copy(data, 0, msg.length - buffered);
  for (let i = 0; i < 16; i++) out.writeUInt32BE(data.readUInt32LE(4 * i), p + 4 * i);
  p += 64;
  out.writeUInt32BE(buffered, p);
  if (algorithm === 'sha256') out.writeUInt32BE(32, p + 4);
  return out;
}

describe('HashType', () => {
  test('Sha1 = 0, Sha256 = 1, reverse mapping', () => {
    expect(HashType.Sha1).toBe(0);
    expect(HashType.Sha256).toBe(1);
    expect(HashType[1]).toBe('Sha256');
    expect(HashType[0]).toBe('Sha1');
  });

  test('every member names one algorithm, each once', () => {
    const values = Object.values(HashType).filter((v): v is number => typeof v === 'number');
    expect(values).toHaveLength(25);
    const names = values.map((v) => lib.hashTypeAlgorithm(v));
    expect(new Set(names).size).toBe(25);
    for (const a of lib.algorithms()) expect(names).toContain(a.name);
  });
});

describe('Hash (immutable)', () => {
  test('the resumable-hash 0.2.5 SHA-1 state from the issue', () => {
    const state = Buffer.from(
      '67452301efcdab8998badcfe10325476c3d2e1f0000001f80000000062e664460dca9f8bfeb17084a24e3f396076a677d12a302552738d9d6b44a12fd9a68fdeb8ad5eb3b46f105ef757a78c976b69792abeeb19a8a1f0e3005ab0600000003f',
      'hex',
    );
    const data = Buffer.from(
      '0f2ebec03321dd1b14a7ff9cd19d1898857cf217357d0e11e9daeb960e731db7df0a737ecc9fdb7c3a6ee326c66443cb3374a92c06c4e547088af0acbda23c',
      'hex',
    );
    const h = new Hash(HashType.Sha1, state).updateSync(data);
    expect(h.digestSync().toString('hex')).toBe('319cff4ee8d4d0418ec21bac5b085ffa4e080206');
    // our serialize() writes the hashq format, which loads again
    expect(new Hash(HashType.Sha1, h.serialize()).digestSync().toString('hex')).toBe(
      '319cff4ee8d4d0418ec21bac5b085ffa4e080206',
    );
  });

  test.each([0, 1, 55, 63, 64, 65, 200, 1000])(
    'legacy SHA-1 and SHA-256 states of %i bytes resume',
    (len) => {
      const msg = rnd.bytes(len);
      const more = rnd.bytes(77);
      const full = Buffer.concat([msg, more]);
      expect(
        new Hash(HashType.Sha256, legacyState('sha256', msg)).updateSync(more).digestSync(),
      ).toEqual(sha256(full));
      expect(
        new Hash(HashType.Sha1, legacyState('sha1', msg)).updateSync(more).digestSync(),
      ).toEqual(sha1(full));
      expect(lib.Hasher.restore(legacyState('sha256', msg)).update(more).digest()).toEqual(
        sha256(full),
      );
    },
  );

  test('update returns a new hash and leaves the original unchanged', async () => {
    const a = Buffer.from('first');
    const b = rnd.bytes(3 * lib.ASYNC_MIN_BYTES); // through the thread pool
    const h0 = new Hash(HashType.Sha256);
    const h1 = h0.updateSync(a);
    const h2 = await h1.update(b);
    const h3 = await h1.update(a);
    expect(h0.digestSync()).toEqual(sha256(Buffer.alloc(0)));
    expect(await h1.digest()).toEqual(sha256(a));
    expect(h2.digestSync()).toEqual(sha256(Buffer.concat([a, b])));
    expect(h3.digestSync()).toEqual(sha256(Buffer.concat([a, a])));
    expect(h1.digestSync()).toEqual(sha256(a)); // digest did not modify it either
    expect(h2.type).toBe(HashType.Sha256);
    const resumed = new Hash(HashType.Sha256, h2.serialize());
    expect(resumed.updateSync(a).digestSync()).toEqual(sha256(Buffer.concat([a, b, a])));
  });

  test('sync == async for every linked type', async () => {
    for (const type of Object.values(HashType).filter((v): v is number => typeof v === 'number')) {
      if (!lib.findAlgorithm(lib.hashTypeAlgorithm(type))) continue;
      const m = rnd.bytes(rnd.int(5000));
      const viaSync = new Hash(type).updateSync(m).digestSync();
      const viaAsync = await (await new Hash(type).update(m)).digest();
      expect(viaAsync).toEqual(viaSync);
      expect(viaSync).toEqual(lib.hash(lib.hashTypeAlgorithm(type), m));
    }
  });

  test('error messages and codes of resumable-hash', async () => {
    expect(() => new Hash(99 as HashType)).toThrow('Unknown hash type');
    expect(() => new Hash('Sha1' as unknown as HashType)).toThrow(lib.UnknownAlgorithmError);
    expect(() => new Hash(HashType.Sha1, 'abc' as unknown as Buffer)).toThrow(
      'Argument should be a buffer object',
    );
    expect(() => new Hash(HashType.Sha1, Buffer.alloc(10))).toThrow('Invalid init payload');
    expect(() => new Hash(HashType.Sha1, Buffer.alloc(10))).toThrow(
      expect.objectContaining({ code: 'ERR_STATE_INVALID' }),
    );
    const sha256State = new Hash(HashType.Sha256).updateSync(Buffer.from('x')).serialize();
    expect(() => new Hash(HashType.Sha1, sha256State)).toThrow(
      expect.objectContaining({
        code: 'ERR_STATE_ALGORITHM_MISMATCH',
        message: expect.stringContaining('Invalid init payload'),
      }),
    );
    const h = new Hash(HashType.Sha1);
    expect(() => h.updateSync('abc' as unknown as Buffer)).toThrow(
      'Argument should be a buffer object',
    );
    expect(() => h.updateSync(new Uint8Array(3) as Buffer)).toThrow(lib.BadArgumentError);
    await expect(h.update('abc' as unknown as Buffer)).rejects.toThrow(
      'Argument should be a buffer object',
    );
    try {
      new Hash(HashType.Sha1, Buffer.alloc(10));
    } catch (err) {
      expect(err).toBeInstanceOf(lib.InvalidStateError);
      expect(err).toBeInstanceOf(lib.HashqError);
    }
  });
});

describe('MutableHash', () => {
  test('updates in place, sync and async, and resumes', async () => {
    const parts = [rnd.bytes(100), rnd.bytes(2 * lib.ASYNC_MIN_BYTES), rnd.bytes(5)];
    const m = new MutableHash(HashType.Sha256);
    expect(await m.update(parts[0])).toBeUndefined();
    await m.update(parts[1]);
    const resumed = new MutableHash(HashType.Sha256, m.serialize());
    expect(m.updateSync(parts[2])).toBeUndefined();
    resumed.updateSync(parts[2]);
    expect(m.digestSync()).toEqual(sha256(Buffer.concat(parts)));
    expect(await resumed.digest()).toEqual(sha256(Buffer.concat(parts)));
    expect(m.type).toBe(HashType.Sha256);
  });

  test('errors', async () => {
    const m = new MutableHash(HashType.Sha1);
    expect(() => m.updateSync('x' as unknown as Buffer)).toThrow(
      'Argument should be a buffer object',
    );
    await expect(m.update(42 as unknown as Buffer)).rejects.toThrow(
      'Argument should be a buffer object',
    );
    const p = m.update(rnd.bytes(2 * lib.ASYNC_MIN_BYTES));
    await expect(m.update(Buffer.from('x'))).rejects.toMatchObject({ code: 'ERR_BUSY' });
    await p;
    expect(() => new MutableHash(-1 as HashType)).toThrow('Unknown hash type');
  });
});

describe('HashStream', () => {
  test('pushes the digest of everything written when the input ends', async () => {
    const chunks = [
      rnd.bytes(10),
      rnd.bytes(3 * lib.ASYNC_MIN_BYTES),
      rnd.bytes(1),
      rnd.bytes(70000),
    ];
    const out: Buffer[] = [];
    const s = new HashStream(HashType.Sha256);
    s.on('data', (d: Buffer) => out.push(d));
    await pipeline(Readable.from(chunks), s);
    expect(out).toEqual([sha256(Buffer.concat(chunks))]);
  });

  test('resumes from a state', async () => {
    const head = rnd.bytes(1000);
    const tail = rnd.bytes(1000);
    const s = new HashStream(HashType.Sha1, new Hash(HashType.Sha1).updateSync(head).serialize());
    const out: Buffer[] = [];
    s.on('data', (d: Buffer) => out.push(d));
    await pipeline(Readable.from([tail]), s);
    expect(out).toEqual([sha1(Buffer.concat([head, tail]))]);
  });

  test('strings written are hashed as UTF-8 (Writable converts them)', async () => {
    const s = new HashStream(HashType.Sha256);
    const out: Buffer[] = [];
    s.on('data', (d: Buffer) => out.push(d));
    await pipeline(Readable.from(['héllo', ' wörld'], { objectMode: false }), s);
    expect(out).toEqual([sha256(Buffer.from('héllo wörld'))]);
  });
});
