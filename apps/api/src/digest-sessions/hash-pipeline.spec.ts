import { createHash, randomBytes, randomInt } from 'node:crypto';

import { createHasher } from '@hashq/native';

import { BATCH_BYTES, HashPipeline, SYNC_HASH_BYTES } from './hash-pipeline';

/** Writes `data` in random pieces as a request body would arrive, waiting whenever write() asks to. */
async function writeInPieces(
  pipeline: HashPipeline,
  data: Buffer,
  maxPiece: number,
): Promise<void> {
  for (let at = 0; at < data.length;) {
    const piece = data.subarray(at, at + randomInt(1, maxPiece + 1));
    at += piece.length;
    await pipeline.write(Buffer.from(piece)); // a fresh buffer per piece, as sockets give them
  }
  await pipeline.drain();
}

describe('HashPipeline', () => {
  it.each([
    ['socket-sized pieces across batch edges', 3 * BATCH_BYTES + 12345, 64 * 1024],
    ['pieces larger than a batch', 5 * BATCH_BYTES + 1, 3 * BATCH_BYTES],
    ['small pieces', 2 * BATCH_BYTES + 7, 1000],
    ['a small body', 1000, 100],
  ])('feeds every byte once, in order: %s', async (_name, size, maxPiece) => {
    const data = randomBytes(size);
    const hasher = createHasher('sha256');
    // a slow second absorber keeps batches in flight while the next ones fill
    const slow = {
      updateChunksAsync: (chunks: Buffer[]) =>
        new Promise((resolve) => setTimeout(resolve, 2)).then(() =>
          hasher.updateChunksAsync(chunks),
        ),
    };
    const pipeline = new HashPipeline([slow], 100);
    await writeInPieces(pipeline, data, maxPiece);
    expect(pipeline.offset).toBe(100 + size);
    expect(pipeline.waiting).toBe(0);
    expect(hasher.digest().toString('hex')).toBe(createHash('sha256').update(data).digest('hex'));
    await pipeline.release();
  });

  it('keeps the chunks written, never copies them', async () => {
    const seen: Buffer[] = [];
    const pipeline = new HashPipeline(
      [{ updateChunksAsync: async (chunks: Buffer[]) => seen.push(...chunks) }],
      0,
    );
    const chunks = [0, 1, 2, 3, 4].map(() => randomBytes(64 * 1024));
    for (const chunk of chunks) await pipeline.write(chunk);
    await pipeline.drain();
    expect(seen.length).toBe(chunks.length);
    seen.forEach((chunk, i) => expect(chunk).toBe(chunks[i])); // the same objects, in order
  });

  it('asks the writer to wait only while a full batch waits for the hashers', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const pipeline = new HashPipeline([{ updateChunksAsync: () => gate }], 0);
    expect(pipeline.write(Buffer.alloc(BATCH_BYTES))).toBeUndefined(); // idle hashers: handed over at once
    expect(pipeline.busy).toBe(true);
    expect(pipeline.write(Buffer.alloc(BATCH_BYTES - 1))).toBeUndefined();
    const waiting = pipeline.write(Buffer.alloc(1)); // second batch full, first still hashing
    expect(waiting).toBeInstanceOf(Promise);
    release();
    await waiting;
    await pipeline.drain();
    expect([pipeline.offset, pipeline.busy]).toEqual([2 * BATCH_BYTES, false]);
  });

  it.each([
    ['a small body (Content-Length known)', 100 * 1024, 100 * 1024, 4096, 'at once'],
    ['a small body (chunked)', 100 * 1024, undefined, 4096, 'at once'],
    ['a large body in socket-sized pieces', 3 * BATCH_BYTES + 5, undefined, 64 * 1024, 'pool'],
    // the end of the body is handed over as soon as it has arrived, whatever its size
    [
      'a large body, Content-Length known',
      3 * BATCH_BYTES + 5,
      3 * BATCH_BYTES + 5,
      64 * 1024,
      'pool',
    ],
    [
      'pieces larger than a batch, Content-Length known',
      5 * BATCH_BYTES + 1,
      5 * BATCH_BYTES + 1,
      3 * BATCH_BYTES,
      'pool',
    ],
  ])(
    'hashes small pieces at once while the hashers are idle, the rest on the pool: %s',
    async (_name, size, expected, maxPiece, mostly) => {
      const data = randomBytes(size);
      const hasher = createHasher('sha256');
      let atOnce = 0;
      let pooled = 0;
      const absorber = {
        count: 2,
        update: (chunk: Buffer) => {
          // small reads on idle hashers; the end of a body (below MIN_HAND_BYTES / 2) in drain()
          expect(chunk.length).toBeLessThanOrEqual(Math.max(SYNC_HASH_BYTES / 2, maxPiece));
          atOnce += chunk.length;
          hasher.update(chunk);
        },
        updateChunksAsync: (chunks: Buffer[]) => {
          pooled += chunks.reduce((sum, chunk) => sum + chunk.length, 0);
          return new Promise((resolve) => setTimeout(resolve, 1)).then(() =>
            hasher.updateChunksAsync(chunks),
          );
        },
      };
      const pipeline = new HashPipeline([absorber], 0, expected);
      await writeInPieces(pipeline, data, maxPiece);
      expect([pipeline.offset, atOnce + pooled]).toEqual([size, size]);
      if (mostly === 'at once') expect(atOnce).toBeGreaterThan(0);
      else expect(pooled).toBeGreaterThan(size / 2);
      expect(hasher.digest().toString('hex')).toBe(createHash('sha256').update(data).digest('hex'));
      await pipeline.release();
    },
  );

  it.each([
    ['hashed at once', 1, false],
    ['handed over', 4, true], // 4 hashers: 128 KiB x 4 is above what is hashed at once
  ])(
    'the end of a body of known length, below the hand-over size, is not kept: %s',
    async (_name, count, pooled) => {
      const hasher = createHasher('sha256');
      const absorber = {
        count,
        update: (chunk: Buffer) => hasher.update(chunk),
        updateChunksAsync: (chunks: Buffer[]) => hasher.updateChunksAsync(chunks),
      };
      const pipeline = new HashPipeline([absorber], 0, 128 * 1024);
      const data = randomBytes(128 * 1024);
      // two socket reads: the body is complete
      expect(pipeline.write(data.subarray(0, 64 * 1024))).toBeUndefined();
      expect(pipeline.write(data.subarray(64 * 1024))).toBeUndefined();
      expect([pipeline.busy, pipeline.waiting]).toEqual([pooled, 0]);
      await pipeline.drain();
      expect(hasher.digest().toString('hex')).toBe(createHash('sha256').update(data).digest('hex'));
      await pipeline.release();
    },
  );
});
