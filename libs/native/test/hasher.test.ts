/**
 * The Hasher API: inputs, copies, sync == async, the thread pool, the busy
 * rule, errors, metadata.
 */
import * as crypto from 'node:crypto';

import * as lib from '../lib';
import { ASYNC_SLICE_BYTES } from '../lib/async';
import { oracle, prng, TEST_SEED } from './helpers/oracle';
import { runChild } from './helpers/spawn';

const rnd = prng(TEST_SEED);
const has = (name: string): boolean => lib.findAlgorithm(name) !== undefined;
// The first linked algorithm Node's crypto also has: the oracle for API tests.
const main = ['sha256', 'sha1', 'sha512', 'sha3-256', 'md5'].find(has) as string;
const sha = (msg: Uint8Array): string => oracle(main, msg)!.toString('hex');

/** A view of a copy of `b` that starts `at` bytes into its ArrayBuffer. */
function withOffset(b: Buffer, at: number): Uint8Array {
  const whole = new Uint8Array(b.length + at + 5);
  whole.set(b, at);
  return whole.subarray(at, at + b.length);
}

describe('inputs', () => {
  const text = 'héllo wörld ✓ '.repeat(200); // > 1 KiB of UTF-8: the heap path
  const bytes = Buffer.from(text, 'utf8');
  const inputs: [string, lib.Input][] = [
    ['Buffer', bytes],
    ['Uint8Array', new Uint8Array(bytes)],
    ['Uint8Array at an offset', withOffset(bytes, 3)],
    ['Uint16Array', new Uint16Array(new Uint8Array(bytes).buffer.slice(0, bytes.length & ~1))],
    ['DataView', new DataView(new Uint8Array(bytes).buffer)],
    ['string', text],
  ];
  test.each(inputs)('%s hashes the bytes of Buffer.from(...)', (kind, input) => {
    const ref = kind === 'Uint16Array' ? bytes.subarray(0, bytes.length & ~1) : bytes;
    expect(lib.hash(main, input).toString('hex')).toBe(sha(ref));
    expect(lib.createHasher(main).update(input).digest().toString('hex')).toBe(sha(ref));
  });

  test('short strings (stack path) and the empty input', () => {
    expect(lib.hash(main, 'abc').toString('hex')).toBe(sha(Buffer.from('abc')));
    expect(lib.hash(main, '').toString('hex')).toBe(sha(Buffer.alloc(0)));
    expect(lib.hash(main, new Uint8Array(0)).toString('hex')).toBe(sha(Buffer.alloc(0)));
  });

  test.each([[42], [null], [{}], [[1, 2, 3]], [new ArrayBuffer(4)]])(
    '%p is refused with ERR_BAD_ARGUMENT',
    (bad) => {
      expect(() => lib.hash(main, bad as never)).toThrow(lib.BadArgumentError);
      expect(() => lib.createHasher(main).update(bad as never)).toThrow(
        expect.objectContaining({ code: 'ERR_BAD_ARGUMENT' }),
      );
    },
  );
});

describe('Hasher', () => {
  test('digest does not end the hasher; copy is independent', () => {
    const h = lib.createHasher(main).update('abc');
    expect(h.digest().toString('hex')).toBe(sha(Buffer.from('abc')));
    expect(h.digest().toString('hex')).toBe(sha(Buffer.from('abc')));
    const c = h.copy();
    h.update('def');
    expect(c.digest().toString('hex')).toBe(sha(Buffer.from('abc')));
    expect(h.digest().toString('hex')).toBe(sha(Buffer.from('abcdef')));
    expect(h.bytesHashed).toBe(6);
    expect(c.bytesHashed).toBe(3);
    expect(h.algorithm).toBe(main);
  });

  test('serialized states are independent buffers (also across pool boundaries)', () => {
    const h = lib.createHasher(main).update('a');
    const s1 = h.serialize();
    const kept = Buffer.from(s1);
    const s2 = h.update('b').serialize();
    s2.fill(0);
    expect(s1).toEqual(kept);
    const n = 1500; // > one 64 KiB pool of small states
    const states = Array.from({ length: n }, (_, i) =>
      lib.createHasher(main).update(String(i)).serialize(),
    );
    const got = states.map((s) => lib.Hasher.restore(s).digest().toString('hex'));
    expect(got).toEqual(Array.from({ length: n }, (_, i) => sha(Buffer.from(String(i)))));
    expect(lib.Hasher.restore(s1).digest()).toEqual(lib.hash(main, 'a'));
  });

  test('a Hasher cannot be constructed directly', () => {
    expect(() => new (lib.Hasher as unknown as new (...a: unknown[]) => unknown)()).toThrow(
      TypeError,
    );
  });

  test('XOF output length: option, digest({ length }) and prefixes', () => {
    if (!has('shake256')) return;
    const msg = rnd.bytes(300);
    const h = lib.createHasher('shake256', { outputLength: 100 });
    expect(h.digest().toString('hex')).toBe(
      oracle('shake256', msg.subarray(0, 0), 100)!.toString('hex'),
    );
    h.update(msg);
    expect(h.digest({ length: 7 })).toEqual(oracle('shake256', msg, 7));
    expect(h.digest({ length: 1000 })).toEqual(oracle('shake256', msg, 1000));
    expect(lib.hash('shake256', msg, { length: 1000 })).toEqual(oracle('shake256', msg, 1000));
    // a hasher's default length is bounded (it travels in the state); digest lengths are not
    expect(() => lib.createHasher('shake256', { outputLength: 65537 })).toThrow(
      lib.BadArgumentError,
    );
    const big = lib.createHasher('shake256', { outputLength: 65536 }).update(msg);
    expect(lib.Hasher.restore(big.serialize()).digest()).toEqual(oracle('shake256', msg, 65536));
    expect(big.digest({ length: 100000 })).toEqual(oracle('shake256', msg, 100000));
  });

  test('output length rules', () => {
    expect(() => lib.createHasher(main).digest({ length: 5 })).toThrow(lib.BadArgumentError);
    expect(() => lib.hash(main, 'x', { length: 0 })).toThrow(lib.BadArgumentError);
    expect(() => lib.hash(main, 'x', { length: 1.5 })).toThrow(lib.BadArgumentError);
    expect(() => lib.createHasher(main, { outputLength: 3 })).toThrow(lib.BadArgumentError);
    const fixed = lib.findAlgorithm(main)!.digestLength;
    expect(lib.hash(main, 'x', { length: fixed })).toHaveLength(fixed);
  });

  test('customization is refused where the algorithm takes none, and above 256 bytes', () => {
    expect(() => lib.createHasher(main, { customization: 'x' })).toThrow(lib.BadArgumentError);
    const cx = lib.algorithms().find((a) => a.customizable);
    if (!cx) return;
    expect(() => lib.createHasher(cx.name, { customization: Buffer.alloc(257) })).toThrow(
      lib.BadArgumentError,
    );
    const a = lib.hash(cx.name, 'm', { customization: 'A' });
    expect(a).not.toEqual(lib.hash(cx.name, 'm', { customization: 'B' }));
    expect(
      lib
        .createHasher(cx.name, { customization: Buffer.alloc(256, 1) })
        .update('m')
        .digest(),
    ).toEqual(lib.hash(cx.name, 'm', { customization: Buffer.alloc(256, 1) }));
  });

  test('unknown algorithms', () => {
    expect(() => lib.createHasher('sha0')).toThrow(lib.UnknownAlgorithmError);
    expect(() => lib.hash('nope', 'x')).toThrow(
      expect.objectContaining({ code: 'ERR_UNKNOWN_ALGORITHM' }),
    );
    expect(() => lib.implementation('nope')).toThrow(lib.UnknownAlgorithmError);
    expect(() => lib.Hasher.restore(Buffer.alloc(10), 'nope')).toThrow(lib.UnknownAlgorithmError);
    const e = (() => {
      try {
        lib.hash('nope', 'x');
      } catch (err) {
        return err;
      }
    })();
    expect(e).toBeInstanceOf(lib.HashqError);
    expect(e).toBeInstanceOf(Error);
  });
});

describe('checksums and md5 against independent oracles', () => {
  test('md5 and crc32 against Node', () => {
    for (const name of ['md5', 'crc32'].filter(has)) {
      for (const len of [0, 1, 3, 63, 64, 65, 1000, 70000]) {
        const m = rnd.bytes(len);
        expect(lib.hash(name, m)).toEqual(oracle(name, m));
      }
    }
  });

  // Check values of the CRC catalogue (reveng.sourceforge.io/crc-catalogue):
  // the CRC of the ASCII string "123456789".
  test.each([
    ['crc32', 'cbf43926'],
    ['crc32c', 'e3069283'],
    ['crc64nvme', 'ae8b14860a799888'],
  ])('%s check value', (name, check) => {
    if (!has(name)) return;
    expect(lib.hash(name, '123456789').toString('hex')).toBe(check);
  });
});

describe('async', () => {
  const big = rnd.bytes(3 * lib.ASYNC_MIN_BYTES + 17);

  test('updateAsync equals update, for small and large inputs, every algorithm', async () => {
    for (const info of lib.algorithms()) {
      const a = lib.createHasher(info.name);
      const b = lib.createHasher(info.name);
      for (const piece of [big.subarray(0, 100), big, big.subarray(5, 9)]) {
        a.update(piece);
        await b.updateAsync(piece);
      }
      expect([info.name, b.digest().toString('hex')]).toEqual([
        info.name,
        a.digest().toString('hex'),
      ]);
    }
  });

  test("updateChunksAsync absorbs its pieces in order: Node's digest, every size, every algorithm", async () => {
    // Pieces of odd sizes (not block-aligned), small and large totals (at once, one pool round
    // trip, several of ASYNC_SLICE_BYTES), views into one buffer and separate buffers, and an
    // updateAsync and update() around them; the oracle hashes the concatenation.
    const large = rnd.bytes(ASYNC_SLICE_BYTES + 3 * 65536 + 5);
    const cut = (bytes: Uint8Array, size: number): Uint8Array[] =>
      Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) =>
        bytes.subarray(i * size, (i + 1) * size),
      );
    const cases: Uint8Array[][] = [
      [],
      [big.subarray(0, 7)],
      cut(big.subarray(0, 1000), 33),
      cut(big, 65536 - 3),
      [rnd.bytes(1), rnd.bytes(lib.ASYNC_MIN_BYTES), rnd.bytes(129)],
      cut(large, 65536 + 11),
      [large],
    ];
    for (const info of lib.algorithms()) {
      for (const chunks of cases) {
        const h = lib.createHasher(info.name);
        h.update('head');
        await h.updateChunksAsync(chunks);
        await h.updateAsync(big.subarray(3, 40));
        const message = Buffer.concat([Buffer.from('head'), ...chunks, big.subarray(3, 40)]);
        const expected =
          oracle(info.name, message, h.digest().length) ?? lib.hash(info.name, message);
        expect([info.name, chunks.length, h.digest().toString('hex')]).toEqual([
          info.name,
          chunks.length,
          expected.toString('hex'),
        ]);
      }
    }
  });

  test('updateChunksAsync: busy while it runs, bad pieces rejected', async () => {
    const h = lib.createHasher(main);
    const running = h.updateChunksAsync([big, big]);
    expect(h.busy).toBe(true);
    await expect(h.updateChunksAsync([big])).rejects.toMatchObject({ code: 'ERR_BUSY' });
    await running;
    await expect(h.updateChunksAsync([big, 5 as unknown as Buffer])).rejects.toMatchObject({
      code: 'ERR_BAD_ARGUMENT',
    });
    expect(h.busy).toBe(false);
    expect(h.digest().toString('hex')).toBe(sha(Buffer.concat([big, big])));
  });

  test("feed absorbs its chunks in order while more are fed: Node's digest, every algorithm", async () => {
    // Chunks of odd sizes fed while the pool task hashes earlier ones (no await between most
    // of them), waits on the backlog between some, an update() before and after; the oracle
    // hashes the concatenation.
    const chunks = [rnd.bytes(1), ...Array.from({ length: 40 }, () => rnd.bytes(rnd.int(70000)))];
    for (const info of lib.algorithms()) {
      const h = lib.createHasher(info.name);
      h.update('head');
      let fed = 0;
      for (const [i, chunk] of chunks.entries()) {
        const backlog = h.feed(chunk);
        fed += chunk.length;
        expect(backlog).toBeGreaterThanOrEqual(chunk.length === 0 ? 0 : 1);
        expect(backlog).toBeLessThanOrEqual(fed);
        if (i % 13 === 12) await h.fedBelow(100_000);
      }
      expect(h.busy).toBe(true);
      await h.flushFed();
      expect(h.busy).toBe(false);
      h.update(big.subarray(3, 40));
      const message = Buffer.concat([Buffer.from('head'), ...chunks, big.subarray(3, 40)]);
      const expected =
        oracle(info.name, message, h.digest().length) ?? lib.hash(info.name, message);
      expect([info.name, h.digest().toString('hex')]).toEqual([
        info.name,
        expected.toString('hex'),
      ]);
    }
  });

  test('feed: the backlog falls as the pool hashes; fedBelow and flushFed wait for it', async () => {
    const h = lib.createHasher(main);
    const chunk = rnd.bytes(1 << 20);
    let backlog = 0;
    for (let i = 0; i < 16; i++) backlog = h.feed(chunk); // 16 MiB: far more than one read
    expect(backlog).toBeGreaterThan(8 << 20);
    await h.fedBelow(4 << 20);
    const after = h.feed(Buffer.alloc(0)); // nothing queued: tells the backlog
    expect(after).toBeLessThanOrEqual(4 << 20);
    await h.flushFed();
    expect(h.feed(Buffer.alloc(0))).toBe(0);
    await h.flushFed();
    expect(h.bytesHashed).toBe(16 << 20);
    expect(h.digest().toString('hex')).toBe(sha(Buffer.concat(Array(16).fill(chunk))));
    // nothing fed: both resolve at once, and the hasher takes other calls
    const idle = lib.createHasher(main);
    await idle.fedBelow(1);
    await idle.flushFed();
    expect(idle.busy).toBe(false);
  });

  test('feed: busy until flushFed settles; other calls, bad chunks and waits are refused', async () => {
    const h = lib.createHasher(main);
    h.feed(big);
    expect(() => h.update(big)).toThrow(lib.BusyError);
    expect(() => h.serialize()).toThrow(lib.BusyError);
    await expect(h.updateAsync(big)).rejects.toMatchObject({ code: 'ERR_BUSY' });
    expect(() => h.feed(5 as unknown as Buffer)).toThrow(
      expect.objectContaining({ code: 'ERR_BAD_ARGUMENT' }),
    );
    await expect(h.fedBelow(-1)).rejects.toMatchObject({ code: 'ERR_BAD_ARGUMENT' });
    await expect(h.fedBelow(1.5)).rejects.toMatchObject({ code: 'ERR_BAD_ARGUMENT' });
    h.feed(big);
    await h.flushFed();
    expect(h.digest().toString('hex')).toBe(sha(Buffer.concat([big, big])));
    // an async update in flight: feed is refused
    const running = h.updateAsync(big);
    expect(() => h.feed(big)).toThrow(lib.BusyError);
    await running;
  });

  test('feed: many hashers at once, each its own order', async () => {
    const messages = Array.from({ length: 8 }, () =>
      Array.from({ length: 12 }, () => rnd.bytes(1 + rnd.int(50_000))),
    );
    const hashers = messages.map(() => lib.createHasher(main));
    for (let i = 0; i < 12; i++) messages.forEach((chunks, j) => hashers[j].feed(chunks[i]));
    await Promise.all(hashers.map((h) => h.flushFed()));
    hashers.forEach((h, j) =>
      expect(h.digest().toString('hex')).toBe(sha(Buffer.concat(messages[j]))),
    );
  });

  test('hashAsync equals hash', async () => {
    for (const info of lib.algorithms()) {
      expect(await lib.hashAsync(info.name, big)).toEqual(lib.hash(info.name, big));
      expect(await lib.hashAsync(info.name, 'short')).toEqual(lib.hash(info.name, 'short'));
    }
    await expect(lib.hashAsync('nope', big)).rejects.toThrow(lib.UnknownAlgorithmError);
  });

  test('concurrent async updates on different hashers', async () => {
    const msgs = [0, 1, 2, 3, 4, 5].map(() => rnd.bytes(lib.ASYNC_MIN_BYTES * 4 + rnd.int(1000)));
    const hashers = msgs.map(() => lib.createHasher(main));
    await Promise.all(hashers.map((h, i) => h.updateAsync(msgs[i])));
    await Promise.all(hashers.map((h, i) => h.updateAsync(msgs[(i + 1) % msgs.length])));
    hashers.forEach((h, i) => {
      expect(h.digest().toString('hex')).toBe(
        sha(Buffer.concat([msgs[i], msgs[(i + 1) % msgs.length]])),
      );
    });
  });

  test("updates beyond the async limit queue and (SHA-NI) pair up: every digest equals Node's", async () => {
    // Many hashers at once, more than the limit: the queue holds the rest,
    // and SHA-1/SHA-224/SHA-256 updates that meet there run two at a time
    // (hq_update2), each with its own buffered head and length.
    const names = ['sha1', 'sha224', 'sha256', 'sha512', 'sha3-256', 'md5'].filter(has);
    const before = lib.asyncStats();
    const jobs = Array.from({ length: 24 }, (_, i) => {
      const name = names[i % names.length];
      const head = rnd.bytes(rnd.int(130));
      const parts = [
        rnd.bytes(lib.ASYNC_MIN_BYTES + rnd.int(200_000)),
        rnd.bytes(lib.ASYNC_MIN_BYTES + rnd.int(9000)),
      ];
      return { name, head, parts, h: lib.createHasher(name).update(head) };
    });
    await Promise.all(
      jobs.map(async (j) => {
        for (const part of j.parts) await j.h.updateAsync(part);
      }),
    );
    for (const j of jobs) {
      const want = crypto
        .createHash(j.name)
        .update(j.head)
        .update(j.parts[0])
        .update(j.parts[1])
        .digest('hex');
      expect([j.name, j.h.digest().toString('hex')]).toEqual([j.name, want]);
    }
    const after = lib.asyncStats();
    expect(after.tasks - before.tasks).toBe(48);
    expect(after.inFlight).toBe(0);
    expect(after.limit).toBeLessThan(24);
    // the pairing path ran exactly where the dispatched path has one
    const pairs = ['sha1', 'sha256'].some((n) => has(n) && lib.implementation(n) === 'sha-ni');
    expect(after.paired - before.paired > 0).toBe(pairs);
  });

  test('a second call while an async update is in flight is refused (ERR_BUSY), state intact', async () => {
    const h = lib.createHasher(main);
    const p = h.updateAsync(big);
    expect(h.busy).toBe(true);
    expect(() => h.update('x')).toThrow(lib.BusyError);
    expect(() => h.digest()).toThrow(expect.objectContaining({ code: 'ERR_BUSY' }));
    expect(() => h.serialize()).toThrow(lib.BusyError);
    expect(() => h.copy()).toThrow(lib.BusyError);
    expect(() => h.bytesHashed).toThrow(lib.BusyError);
    await expect(h.updateAsync(big)).rejects.toThrow(lib.BusyError);
    await expect(h.updateAsync('tiny')).rejects.toMatchObject({ code: 'ERR_BUSY' });
    await p;
    expect(h.busy).toBe(false);
    expect(h.digest().toString('hex')).toBe(sha(big));
  });

  test('the input buffer stays alive while the pool reads it (child process, forced GC)', () => {
    expect(runChild<boolean[]>('async-gc', null, 'dispatched', ['--expose-gc'])).toEqual([
      true,
      true,
      true,
      true,
    ]);
  });

  test('fed chunks stay alive until the pool has hashed them (child process, forced GC)', () => {
    expect(runChild<boolean[]>('feed-gc', null, 'dispatched', ['--expose-gc'])).toEqual([
      true,
      true,
    ]);
  });

  test('inputs larger than ASYNC_SLICE_BYTES (internal) go in slices: same digest, busy until the last slice', async () => {
    // a Float64Array view that starts 8 bytes into its buffer and spans
    // 2 slices + a tail, so slicing must work on bytes, not elements
    const n = 2 * ASYNC_SLICE_BYTES + 4096;
    const raw = crypto.randomFillSync(Buffer.alloc(n + 16));
    const view = new Float64Array(raw.buffer, raw.byteOffset + 8, n / 8);
    const h = lib.createHasher(main);
    h.update('head');
    let settled = false;
    const p = h.updateAsync(view).then(() => (settled = true));
    const seen: boolean[] = [];
    while (!settled) {
      seen.push(h.busy);
      await new Promise((r) => setImmediate(r));
    }
    await p;
    expect(seen.length).toBeGreaterThan(1);
    expect(seen.every((b) => b)).toBe(true);
    expect(h.busy).toBe(false);
    expect(h.bytesHashed).toBe(4 + n);
    expect(h.digest().toString('hex')).toBe(
      sha(Buffer.concat([Buffer.from('head'), raw.subarray(8, 8 + n)])),
    );
  });

  test('the event loop keeps turning during updateAsync of 64 MiB', async () => {
    const data = Buffer.alloc(64 * 1024 * 1024, 0x61);
    const h = lib.createHasher(main);
    let ticks = 0;
    let running = true;
    const spin = (): void => {
      ticks++;
      if (running) setImmediate(spin);
    };
    setImmediate(spin);
    await h.updateAsync(data);
    running = false;
    expect(ticks).toBeGreaterThan(1);
    expect(h.digest()).toEqual(crypto.createHash(main).update(data).digest());
  });
});

describe('serialize() output', () => {
  test('is a genuine Buffer over its own bytes (pool slices do not overlap)', () => {
    const a = lib.createHasher(main).update('abc');
    const b = lib.createHasher(main).update('abcd');
    const sa = a.serialize();
    const sb = b.serialize();
    const copyA = Buffer.from(sa);
    expect(Buffer.isBuffer(sa)).toBe(true);
    expect(sa).toBeInstanceOf(Buffer);
    expect(sa.constructor).toBe(Buffer);
    expect(sa).toStrictEqual(copyA);
    expect(sa.toString('hex')).toBe(copyA.toString('hex'));
    expect(sa.readUInt32LE(0)).toBe(copyA.readUInt32LE(0));
    expect(Buffer.isBuffer(sa.subarray(1))).toBe(true);
    expect(sa.byteOffset % 8).toBe(0);
    expect(sb.byteOffset % 8).toBe(0);
    // writing one state must not change the other
    sb.fill(0);
    expect(sa).toEqual(copyA);
    expect(lib.Hasher.restore(sa).digest().toString('hex')).toBe(sha(Buffer.from('abc')));
  });
});

describe('metadata', () => {
  test('algorithms() describes each linked algorithm', () => {
    const list = lib.algorithms();
    expect(new Set(list.map((a) => a.id)).size).toBe(list.length);
    for (const a of list) {
      expect(a).toEqual({
        name: expect.any(String),
        id: expect.any(Number),
        digestLength: expect.any(Number),
        blockSize: expect.any(Number),
        xof: expect.any(Boolean),
        customizable: expect.any(Boolean),
        standard: expect.any(String),
        implementation: expect.any(String),
      });
      expect(a.digestLength).toBeGreaterThan(0);
      expect(a.blockSize).toBeGreaterThan(0);
      expect(lib.implementation(a.name)).toBe(a.implementation);
      expect(lib.hash(a.name, '')).toHaveLength(a.digestLength);
    }
    if (has('sha256'))
      expect(lib.findAlgorithm('sha256')).toMatchObject({
        digestLength: 32,
        blockSize: 64,
        xof: false,
      });
    if (has('shake128'))
      expect(lib.findAlgorithm('shake128')).toMatchObject({ blockSize: 168, xof: true });
  });

  test('cpucycles counts up', () => {
    const a = lib.cpucycles();
    let x = 0;
    for (let i = 0; i < 100000; i++) x += i;
    const b = lib.cpucycles();
    expect(typeof a).toBe('bigint');
    expect(b > a).toBe(x > 0);
    expect(['rdtsc', 'cntvct_el0', 'rdtime', 'rdcycle', 'clock_monotonic']).toContain(
      lib.cpucyclesSource(),
    );
  });
});
