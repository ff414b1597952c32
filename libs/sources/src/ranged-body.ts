import { bodyFailed, endedEarly } from './chunked-body';
import { SourceError } from './source-error';

/** A response body being received (Node's IncomingMessage, as the AWS SDK answers). */
export type Body = AsyncIterable<Buffer | Uint8Array> & { destroy?: () => void };

/** Fetches bytes [start, end] (inclusive) of the very object the first answer showed. */
export type FetchRange = (start: number, end: number, signal: AbortSignal) => Promise<Body>;

export interface RangedRead {
  /**
   * The answer to the first request: bytes [offset, offset + segmentBytes) of the object, or, when
   * `firstOpenEnded`, bytes [offset, size) of which only the first segment is read.
   */
  first: Body;
  firstOpenEnded: boolean;
  offset: number;
  size: number;
  /** Bytes per request, and so per chunk yielded. */
  segmentBytes: number;
  /** Requests in flight at once (the first one included). */
  inFlight: number;
  fetch: FetchRange;
  /** Aborted when the read ends, early or not: the requests still running stop. */
  abort: AbortController;
  what: string;
}

/**
 * Reads [offset, size) as consecutive ranged requests, `inFlight` of them at once, and yields each
 * range, in order, as one chunk: a single connection to a loopback or LAN server is limited by the
 * server's one stream (s3rver: one fs read, one socket write at a time), several run side by side.
 * Each range lands in one of `inFlight + 2` buffers used in turn, so a yielded Buffer stays valid
 * until the iterator has been advanced twice more (the Source contract). A range that comes back
 * short or long fails the read (SOURCE_READ_FAILED / SOURCE_CHANGED) as chunkBody does.
 */
export async function* rangedChunks(read: RangedRead): AsyncGenerator<Buffer> {
  const { offset, size, segmentBytes, inFlight, abort } = read;
  const ring: Buffer[] = [];
  const count = Math.ceil((size - offset) / segmentBytes);
  const pending = new Map<number, Promise<Buffer>>();
  const start = (index: number) => {
    const from = offset + index * segmentBytes;
    const to = Math.min(size, from + segmentBytes);
    ring[index % (inFlight + 2)] ??= Buffer.allocUnsafeSlow(segmentBytes);
    const target = ring[index % (inFlight + 2)].subarray(0, to - from);
    const body = index === 0 ? Promise.resolve(read.first) : read.fetch(from, to - 1, abort.signal);
    const open = index === 0 && read.firstOpenEnded;
    const filled = body.then((answer) => readInto(answer, target, read.what, abort.signal, open));
    filled.catch(() => undefined); // awaited in order below; a later one may fail after an early end
    pending.set(index, filled);
  };
  try {
    for (let index = 0; index < Math.min(inFlight, count); index++) start(index);
    for (let index = 0; index < count; index++) {
      const chunk = await pending.get(index)!;
      pending.delete(index);
      if (index + inFlight < count) start(index + inFlight);
      yield chunk;
    }
  } finally {
    abort.abort();
    read.first.destroy?.();
  }
}

/**
 * Fills `target` with the whole body: fewer bytes or more is an error, never a short digest; an
 * `openEnded` body is read until `target` is full, and the rest dropped. An abort (the read ended)
 * destroys the body, which frees its connection.
 */
async function readInto(
  body: Body,
  target: Buffer,
  what: string,
  signal: AbortSignal,
  openEnded: boolean,
): Promise<Buffer> {
  let filled = 0;
  const stop = () => body.destroy?.();
  if (signal.aborted) stop();
  signal.addEventListener('abort', stop, { once: true });
  try {
    for await (const piece of body) {
      const raw = openEnded ? piece.subarray(0, target.length - filled) : piece;
      if (filled + raw.length > target.length) {
        throw new SourceError('SOURCE_CHANGED', `${what} sent more than the range asked`, {
          expected: target.length,
        });
      }
      Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).copy(target, filled);
      filled += raw.length;
      if (openEnded && filled === target.length) break; // ends the iteration: the body is destroyed
    }
  } catch (err) {
    body.destroy?.();
    throw bodyFailed(err, what, filled);
  } finally {
    signal.removeEventListener('abort', stop);
  }
  if (filled < target.length) throw endedEarly(what, filled, target.length);
  return target;
}
