import { createHash, randomBytes } from 'node:crypto';

import { chunkBody } from './chunked-body';
import { type Body, rangedChunks } from './ranged-body';
import { SourceError } from './source-error';

/**
 * chunkBody and rangedChunks on bodies made here: pieces of random sizes, answers cut short or
 * too long; the oracle is Node's crypto over the bytes sent.
 */
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** `data` as a body of pieces of 1..max bytes. */
async function* pieces(data: Buffer, max = 70_000): AsyncGenerator<Buffer> {
  for (let at = 0; at < data.length;) {
    const n = 1 + Math.floor(Math.random() * max);
    yield data.subarray(at, at + n);
    at += n;
  }
}

/** Every chunk, copied (a chunk may be reused after two more), and their lengths. */
async function drain(stream: AsyncIterable<Buffer>): Promise<{ bytes: Buffer; sizes: number[] }> {
  const parts: Buffer[] = [];
  for await (const chunk of stream) parts.push(Buffer.from(chunk));
  return { bytes: Buffer.concat(parts), sizes: parts.map((p) => p.length) };
}

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (err: SourceError) => err,
  );

describe('chunkBody', () => {
  it('cuts any pieces into chunks of chunkBytes; the bytes are the ones sent', async () => {
    const data = randomBytes(5 * 65_536 + 123);
    const { bytes, sizes } = await drain(chunkBody(pieces(data), 65_536, data.length));
    expect(sha256(bytes)).toBe(sha256(data));
    expect(sizes).toEqual([65_536, 65_536, 65_536, 65_536, 65_536, 123]);
  });

  it('a body known to be shorter than a chunk lands in a buffer of its own size', async () => {
    const data = randomBytes(1000);
    const chunks: Buffer[] = [];
    for await (const chunk of chunkBody(pieces(data, 100), 8 * 1024 * 1024, data.length))
      chunks.push(chunk);
    expect(chunks.map((c) => [c.length, c.buffer.byteLength])).toEqual([[1000, 1000]]);
    expect(chunks[0]).toEqual(data);
  });

  it('more bytes than announced → SOURCE_CHANGED; fewer → SOURCE_READ_FAILED', async () => {
    const data = randomBytes(1000);
    const long = await failure(drain(chunkBody(pieces(data, 300), 1 << 20, 999)));
    expect([long.code, long.permanent]).toEqual(['SOURCE_CHANGED', true]);
    const short = await failure(drain(chunkBody(pieces(data, 300), 1 << 20, 1001)));
    expect([short.code, short.permanent]).toEqual(['SOURCE_READ_FAILED', false]);
  });
});

describe('rangedChunks', () => {
  const data = randomBytes(10 * 1000 + 7);
  /** A body of data[start, end], optionally cut or padded. */
  const answer = (start: number, end: number, change = 0): Body =>
    pieces(
      change >= 0
        ? Buffer.concat([data.subarray(start, end + 1), Buffer.alloc(change)])
        : data.subarray(start, end + 1 + change),
      400,
    );

  it('yields the ranges in order, each a chunk; no more than inFlight requests at once', async () => {
    let running = 0;
    let most = 0;
    const asked: string[] = [];
    const stream = rangedChunks({
      first: answer(0, 999),
      firstOpenEnded: false,
      offset: 0,
      size: data.length,
      segmentBytes: 1000,
      inFlight: 3,
      fetch: async (start, end) => {
        asked.push(`${start}-${end}`);
        most = Math.max(most, ++running);
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
        running--;
        return answer(start, end);
      },
      abort: new AbortController(),
      what: 'test',
    });
    const { bytes, sizes } = await drain(stream);
    expect(sha256(bytes)).toBe(sha256(data));
    expect(sizes).toEqual([...Array(10).fill(1000), 7]);
    expect(asked).toEqual(
      Array.from(
        { length: 10 },
        (_, i) => `${(i + 1) * 1000}-${i === 9 ? 10_006 : (i + 2) * 1000 - 1}`,
      ),
    );
    expect(most).toBeLessThanOrEqual(3);
  });

  it('an open-ended first answer is read for its first range only, from a resumed offset', async () => {
    const stream = rangedChunks({
      first: pieces(data.subarray(2500), 400),
      firstOpenEnded: true,
      offset: 2500,
      size: data.length,
      segmentBytes: 1000,
      inFlight: 2,
      fetch: async (start, end) => answer(start, end),
      abort: new AbortController(),
      what: 'test',
    });
    const { bytes } = await drain(stream);
    expect(sha256(bytes)).toBe(sha256(data.subarray(2500)));
  });

  it('a range answered short or long fails the read and aborts the requests in flight', async () => {
    for (const [change, code] of [
      [-1, 'SOURCE_READ_FAILED'],
      [1, 'SOURCE_CHANGED'],
    ] as const) {
      const abort = new AbortController();
      const stream = rangedChunks({
        first: answer(0, 999),
        firstOpenEnded: false,
        offset: 0,
        size: data.length,
        segmentBytes: 1000,
        inFlight: 2,
        fetch: async (start, end) => answer(start, end, start === 3000 ? change : 0),
        abort,
        what: 'test',
      });
      const err = await failure(drain(stream));
      expect(err.code).toBe(code);
      expect(abort.signal.aborted).toBe(true);
    }
  });
});
