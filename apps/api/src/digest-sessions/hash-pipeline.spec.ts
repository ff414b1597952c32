import { createHash, randomBytes, randomInt } from 'node:crypto';

import { createHasher } from '@hashq/native';

import {
  type Absorber,
  FEED_HIGH_BYTES,
  FEED_LOW_BYTES,
  HashPipeline,
  SYNC_HASH_BYTES,
} from './hash-pipeline';

/** Writes `data` in random pieces as a request body would arrive, waiting whenever write() asks to. */
async function writeInPieces(
  pipeline: HashPipeline,
  data: Buffer,
  maxPiece: number,
): Promise<number> {
  let waits = 0;
  for (let at = 0; at < data.length;) {
    const piece = data.subarray(at, at + randomInt(1, maxPiece + 1));
    at += piece.length;
    const waiting = pipeline.write(Buffer.from(piece)); // a fresh buffer per piece, as sockets give them
    if (waiting) {
      waits++;
      await waiting;
    }
  }
  await pipeline.drain();
  return waits;
}

/** An absorber whose backlog the test sets; it records what it is given. */
function recordingAbsorber() {
  const fed: Buffer[] = [];
  const waits: number[] = [];
  let backlog = 0;
  let release: () => void = () => undefined;
  const absorber: Absorber & { update: (chunk: Buffer) => void } = {
    feed: (chunk) => {
      fed.push(chunk);
      backlog += chunk.length;
      return backlog;
    },
    fedBelow: (bytes) => {
      waits.push(bytes);
      return new Promise<void>((resolve) => (release = resolve));
    },
    flushFed: async () => {
      backlog = 0;
    },
    update: () => undefined,
  };
  return {
    absorber,
    fed,
    waits,
    setBacklog: (n: number) => (backlog = n),
    release: () => release(),
  };
}

describe('HashPipeline', () => {
  it.each([
    ['socket-sized pieces', 3 * FEED_HIGH_BYTES + 12345, 64 * 1024],
    ['pieces larger than the backlog allowed', 5 * FEED_HIGH_BYTES + 1, 3 * FEED_HIGH_BYTES],
    ['small pieces', FEED_HIGH_BYTES + 7, 1000],
    ['a small body', 1000, 100],
  ])(
    "hashes every byte once, in order, as Node's crypto does: %s",
    async (_name, size, maxPiece) => {
      const data = randomBytes(size);
      const hashers = ['sha256', 'sha512'].map((name) => createHasher(name));
      const pipeline = new HashPipeline(hashers, 100);
      await writeInPieces(pipeline, data, maxPiece);
      expect([pipeline.offset, pipeline.busy]).toEqual([100 + size, false]);
      for (const hasher of hashers) {
        expect(hasher.digest().toString('hex')).toBe(
          createHash(hasher.algorithm).update(data).digest('hex'),
        );
      }
      await pipeline.release();
    },
  );

  it('feeds the chunks written as they are, never copies', async () => {
    const { absorber, fed } = recordingAbsorber();
    const pipeline = new HashPipeline([absorber], 0);
    const chunks = [0, 1, 2, 3, 4].map(() => randomBytes(64 * 1024));
    for (const chunk of chunks) expect(pipeline.write(chunk)).toBeUndefined();
    await pipeline.drain();
    expect(fed.length).toBe(chunks.length);
    fed.forEach((chunk, i) => expect(chunk).toBe(chunks[i])); // the same objects, in order
  });

  it('asks the writer to wait once the hashers are FEED_HIGH_BYTES behind, until FEED_LOW_BYTES', async () => {
    const a = recordingAbsorber();
    const b = recordingAbsorber();
    const pipeline = new HashPipeline([a.absorber, b.absorber], 0);
    const chunk = Buffer.alloc(64 * 1024);
    let written = 0;
    while (written + chunk.length <= FEED_HIGH_BYTES) {
      expect(pipeline.write(chunk)).toBeUndefined();
      written += chunk.length;
    }
    b.setBacklog(0); // one hasher caught up: the slower one decides
    const waiting = pipeline.write(chunk);
    expect(waiting).toBeInstanceOf(Promise);
    expect([a.waits, b.waits]).toEqual([[FEED_LOW_BYTES], [FEED_LOW_BYTES]]);
    let resumed = false;
    void waiting!.then(() => (resumed = true));
    a.release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(resumed).toBe(false); // both must be down to FEED_LOW_BYTES
    b.release();
    await waiting;
    expect(pipeline.offset).toBe(written + chunk.length);
  });

  it('hashes small pieces at once while nothing is fed, and feeds everything after the first large one', async () => {
    const data = randomBytes(3 * 64 * 1024 + 2000 + SYNC_HASH_BYTES / 2 + 3000);
    const hasher = createHasher('sha256');
    const atOnce: number[] = [];
    const fed: number[] = [];
    const absorber: Absorber = {
      count: 2, // SYNC_HASH_BYTES / 2 at once
      update: (chunk: Buffer) => {
        atOnce.push(chunk.length);
        hasher.update(chunk);
      },
      feed: (chunk: Buffer) => {
        fed.push(chunk.length);
        return hasher.feed(chunk);
      },
      fedBelow: (bytes: number) => hasher.fedBelow(bytes),
      flushFed: () => hasher.flushFed(),
    };
    const pipeline = new HashPipeline([absorber], 0);
    const pieces = [1000, SYNC_HASH_BYTES / 2, 64 * 1024, 1000, 64 * 1024, 64 * 1024];
    let at = 0;
    for (const size of pieces) {
      await pipeline.write(data.subarray(at, at + size));
      at += size;
    }
    await pipeline.drain();
    expect(pipeline.busy).toBe(false);
    await pipeline.write(data.subarray(at)); // drained: small pieces at once again
    expect(atOnce).toEqual([1000, SYNC_HASH_BYTES / 2, data.length - at]);
    expect(fed).toEqual([64 * 1024, 1000, 64 * 1024, 64 * 1024]);
    expect(hasher.digest().toString('hex')).toBe(createHash('sha256').update(data).digest('hex'));
  });
});
