/**
 * The serialized state: golden states of format version 1 load and finish
 * correctly, and every damaged, foreign or future state is rejected with
 * the right code, never a crash.
 */
import * as fs from 'node:fs';

import * as lib from '../lib';
import { GOLDEN_FILE, goldenMessage, GoldenState } from './fixtures/make-golden';
import {
  LARGE_GOLDEN_FILE,
  LARGE_MESSAGE_BYTES,
  LargeGoldenState,
  largeMessage,
} from './fixtures/make-golden-large';
import { hasOracle, oracle, prng, TEST_SEED } from './helpers/oracle';

const golden: GoldenState[] = JSON.parse(fs.readFileSync(GOLDEN_FILE, 'utf8'));
const linked = golden.filter((g) => lib.findAlgorithm(g.algorithm));
const rnd = prng(TEST_SEED);

/** CRC-32C (Castagnoli, reflected 0x82F63B78), bitwise: an implementation
 * independent of the C core's, to re-seal tampered states. */
function crc32c(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const b of bytes) {
    crc ^= b;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function reseal(state: Buffer): Buffer {
  const s = Buffer.from(state);
  s.writeUInt32LE(crc32c(s.subarray(0, s.length - 4)), s.length - 4);
  return s;
}

/** The code restore() fails with, or 'accepted'. */
function restoreCode(state: Uint8Array, algorithm?: string): string {
  try {
    lib.Hasher.restore(state, algorithm);
    return 'accepted';
  } catch (err) {
    if (!(err instanceof lib.HashqError)) throw err;
    return err.code;
  }
}

const stateOf = (g: GoldenState): Buffer => Buffer.from(g.state, 'hex');

test('golden states cover every linked algorithm', () => {
  const missing = lib.algorithms().filter((a) => !golden.some((g) => g.algorithm === a.name));
  expect(missing.map((a) => a.name)).toEqual([]);
});

test('the format checker (CRC-32C) matches the standard check value', () => {
  expect(crc32c(Buffer.from('123456789')).toString(16)).toBe('e3069283');
  for (const g of linked) expect(reseal(stateOf(g))).toEqual(stateOf(g));
});

describe.each(linked.map((g) => [g.algorithm, g] as const))('golden %s', (_name, g) => {
  const info = lib.findAlgorithm(g.algorithm)!;
  const msg = goldenMessage(g.messageLength);
  const options = {
    outputLength: g.options.outputLength,
    customization:
      g.options.customization === undefined
        ? undefined
        : Buffer.from(g.options.customization, 'hex'),
  };

  test('loads, finishes to the recorded digest and to the oracle', () => {
    const h = lib.Hasher.restore(stateOf(g), g.algorithm);
    expect(h.bytesHashed).toBe(g.messageLength);
    const digest = h.digest().toString('hex');
    expect(digest).toBe(g.digest);
    const independent = options.customization
      ? undefined
      : oracle(g.algorithm, msg, options.outputLength);
    if (hasOracle(g.algorithm)) expect(digest).toBe(independent!.toString('hex'));
    expect(digest).toBe(
      lib.hash(g.algorithm, msg, { ...options, length: options.outputLength }).toString('hex'),
    );
    // continuing after the load works too
    const more = Buffer.from('and more');
    expect(h.update(more).digest()).toEqual(
      lib.hash(g.algorithm, Buffer.concat([msg, more]), {
        ...options,
        length: options.outputLength,
      }),
    );
  });

  test('today’s serializer writes the same bytes', () => {
    expect(lib.createHasher(g.algorithm, options).update(msg).serialize().toString('hex')).toBe(
      g.state,
    );
  });

  test('header fields: magic, version 1, algorithm id, length', () => {
    const s = stateOf(g);
    expect(s.subarray(0, 4).toString('latin1')).toBe('HQst');
    expect(s[4]).toBe(1);
    expect(s[5]).toBe(info.id);
    expect(Number(s.readBigUInt64LE(8))).toBe(g.messageLength);
    // 96/112-byte states would be taken for resumable-hash states when damaged
    expect([96, 112]).not.toContain(s.length);
  });

  test('every truncation is rejected (ERR_STATE_INVALID)', () => {
    const s = stateOf(g);
    const wrong: string[] = [];
    for (let n = 0; n < s.length; n++) {
      const code = restoreCode(s.subarray(0, n));
      if (code !== 'ERR_STATE_INVALID') wrong.push(`${n}: ${code}`);
    }
    expect(wrong).toEqual([]);
    expect(restoreCode(Buffer.concat([s, Buffer.from([0])]))).toBe('ERR_STATE_INVALID');
  });

  test('every single-bit flip is rejected with the right code', () => {
    const s = stateOf(g);
    const wrong: string[] = [];
    for (let i = 0; i < s.length; i++) {
      for (let bit = 0; bit < 8; bit++) {
        const t = Buffer.from(s);
        t[i] ^= 1 << bit;
        // the version byte is checked first: a larger number is a future version
        const want = i === 4 && t[4] > 1 ? 'ERR_STATE_VERSION' : 'ERR_STATE_INVALID';
        const code = restoreCode(t);
        if (code !== want) wrong.push(`byte ${i} bit ${bit}: ${code}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  test('tampered fields with a valid checksum are rejected', () => {
    const s = stateOf(g);
    const tamper = (f: (t: Buffer) => void): string => {
      const t = Buffer.from(s);
      f(t);
      return restoreCode(reseal(t));
    };
    expect(tamper((t) => (t[4] = 2))).toBe('ERR_STATE_VERSION');
    expect(tamper((t) => (t[4] = 255))).toBe('ERR_STATE_VERSION');
    expect(tamper((t) => (t[4] = 0))).toBe('ERR_STATE_INVALID');
    expect(tamper((t) => (t[5] = 0))).toBe('ERR_STATE_INVALID');
    expect(tamper((t) => (t[5] = 250))).toBe('ERR_STATE_INVALID');
    expect(tamper((t) => (t[6] = 1))).toBe('ERR_STATE_INVALID');
    expect(tamper((t) => (t[7] = 0x80))).toBe('ERR_STATE_INVALID');
    if (info.blockSize > 1) expect(tamper((t) => (t[8] += 1))).toBe('ERR_STATE_INVALID');
    if (info.xof) {
      expect(tamper((t) => t.writeUInt32LE(0, 16))).toBe('ERR_STATE_INVALID');
      expect(tamper((t) => t.writeUInt32LE(2 ** 30 + 1, 16))).toBe('ERR_STATE_INVALID');
    } else {
      expect(tamper((t) => t.writeUInt32LE(info.digestLength + 1, 16))).toBe('ERR_STATE_INVALID');
    }
    if (!info.customizable) expect(tamper((t) => (t[20] = 1))).toBe('ERR_STATE_INVALID');
    else expect(tamper((t) => t.writeUInt16LE(257, 20))).toBe('ERR_STATE_INVALID');
  });

  test('a state of another algorithm is refused (ERR_STATE_ALGORITHM_MISMATCH)', () => {
    for (const other of lib.algorithms()) {
      if (other.name === g.algorithm) continue;
      expect([other.name, restoreCode(stateOf(g), other.name)]).toEqual([
        other.name,
        'ERR_STATE_ALGORITHM_MISMATCH',
      ]);
    }
    expect(restoreCode(stateOf(g), g.algorithm)).toBe('accepted');
  });
});

describe("golden states past 2^32 bytes (written by a 4 GiB run, digest by Node's crypto)", () => {
  const large: LargeGoldenState[] = JSON.parse(fs.readFileSync(LARGE_GOLDEN_FILE, 'utf8'));

  test('below and above 2^32 for SHA-1, SHA-256, SHA-512, SHA3-256 and MD5', () => {
    const seen = large.map((g) => `${g.algorithm} ${g.bytes > 2 ** 32 ? 'above' : 'below'}`);
    const algorithms = ['sha1', 'sha256', 'sha512', 'sha3-256', 'md5'];
    expect(seen.sort()).toEqual(algorithms.flatMap((a) => [`${a} above`, `${a} below`]).sort());
  });

  test.each(large.map((g) => [g.algorithm, g.bytes, g] as const))(
    '%s at %i bytes finishes to the digest',
    (name, bytes, g) => {
      const state = Buffer.from(g.state, 'hex');
      expect(state.readBigUInt64LE(8)).toBe(BigInt(bytes));
      const h = lib.Hasher.restore(state, name);
      expect(h.bytesHashed).toBe(bytes);
      h.update(largeMessage(bytes, LARGE_MESSAGE_BYTES));
      expect(h.digest().toString('hex')).toBe(g.digest);
      expect(Buffer.from(lib.Hasher.restore(state).serialize())).toEqual(state);
    },
  );
});

test(`random garbage is rejected (ERR_STATE_INVALID) (HASHQ_TEST_SEED=${TEST_SEED})`, () => {
  const wrong: string[] = [];
  const lengths = [0, 1, 4, 27, 28, 96, 112, 511, 512, 513, 4096];
  for (let i = 0; i < 3000; i++) {
    const len = i < lengths.length ? lengths[i] : rnd.int(600);
    const t = rnd.bytes(len);
    if (i % 2 && len >= 8) {
      // a plausible header: magic, version 1, a real algorithm id
      t.write('HQst', 0, 'latin1');
      t[4] = 1;
      t[5] = linked[rnd.int(linked.length)]
        ? lib.findAlgorithm(linked[rnd.int(linked.length)].algorithm)!.id
        : 1;
    }
    const code = restoreCode(t);
    if (code !== 'ERR_STATE_INVALID') wrong.push(`${t.toString('hex')}: ${code}`);
  }
  expect(wrong).toEqual([]);
});

test('non-bytes are refused (ERR_BAD_ARGUMENT)', () => {
  for (const bad of ['HQst', 42, null, undefined, {}, new ArrayBuffer(64)]) {
    expect(() => lib.Hasher.restore(bad as never)).toThrow(lib.BadArgumentError);
  }
});
