import { SourceError } from './source-error';

/**
 * Turns a network body (small pieces of any size) into chunks of `chunkBytes`
 * in three buffers used in turn (a yielded Buffer stays valid until the
 * iterator has been advanced twice more, as the Source contract says).
 *
 * `skip` bytes at the start are dropped (a server that ignored Range sent the
 * whole body). `expected` is the number of bytes that must follow: fewer (the
 * connection ended early) or more is a transient SOURCE_READ_FAILED, never a
 * short digest. Errors of the body (reset, timeout) become SOURCE_READ_FAILED.
 * `onBytes` is told the length of every piece as it arrives.
 */
export async function* chunkBody(
  body: AsyncIterable<Buffer | Uint8Array>,
  chunkBytes: number,
  expected: number | null,
  skip = 0,
  what = 'source',
  onBytes?: (count: number) => void,
): AsyncGenerator<Buffer> {
  const buffers: Buffer[] = [];
  let turn = 0;
  let current: Buffer | null = null;
  let filled = 0;
  let toSkip = skip;
  let delivered = 0;
  // A body known to be shorter than a chunk gets a buffer of its own size: a batch reads thousands
  // of small objects, and a chunk-sized buffer each (8 MiB) costs a mapping and GC pressure apiece.
  const bufferBytes = expected === null ? chunkBytes : Math.max(1, Math.min(chunkBytes, expected));
  const take = (): Buffer => {
    if (buffers.length < 3) buffers.push(Buffer.allocUnsafeSlow(bufferBytes));
    return buffers[turn++ % 3];
  };
  try {
    for await (const raw of body) {
      let piece = Buffer.isBuffer(raw)
        ? raw
        : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
      onBytes?.(piece.length);
      if (toSkip > 0) {
        const n = Math.min(toSkip, piece.length);
        toSkip -= n;
        piece = piece.subarray(n);
      }
      if (current === null && isWholeChunk(piece.length, bufferBytes, delivered, expected)) {
        // At a chunk boundary a piece that is the whole chunk is passed on, not copied: the body
        // keeps it valid until asked twice more (a Readable's pieces are fresh, RawBody's slots
        // wait), as the Source contract asks of the chunks.
        delivered += piece.length;
        if (expected !== null && delivered > expected) throw tooLong(what, expected);
        yield piece;
        continue;
      }
      while (piece.length > 0) {
        current ??= take();
        const n = Math.min(bufferBytes - filled, piece.length);
        piece.copy(current, filled, 0, n);
        filled += n;
        piece = piece.subarray(n);
        if (filled === bufferBytes) {
          delivered += filled;
          if (expected !== null && delivered > expected) throw tooLong(what, expected);
          const out = current;
          current = null;
          filled = 0;
          yield out;
        }
      }
    }
  } catch (err) {
    throw bodyFailed(err, what, delivered + filled);
  }
  if (current && filled > 0) {
    delivered += filled;
    if (expected !== null && delivered > expected) throw tooLong(what, expected);
    yield current.subarray(0, filled);
  }
  if (toSkip > 0 || (expected !== null && delivered < expected)) {
    throw endedEarly(what, delivered, expected);
  }
}

/** A piece of `length` at a chunk boundary fills the chunk: a whole one, or the body's last. */
function isWholeChunk(
  length: number,
  bufferBytes: number,
  delivered: number,
  expected: number | null,
): boolean {
  if (length === bufferBytes) return true;
  return length > 0 && length < bufferBytes && delivered + length === expected;
}

/** A body's own failure (reset, timeout) as SOURCE_READ_FAILED; a SourceError stays as it is. */
export function bodyFailed(err: unknown, what: string, bytesDelivered: number): SourceError {
  if (err instanceof SourceError) return err;
  return new SourceError(
    'SOURCE_READ_FAILED',
    `reading ${what} failed: ${(err as Error).message}`,
    {
      cause: (err as NodeJS.ErrnoException).code ?? (err as Error).name,
      bytesDelivered,
    },
  );
}

/** A body that ended before the bytes announced: transient, never a short digest. */
export function endedEarly(
  what: string,
  bytesDelivered: number,
  expected: number | null,
): SourceError {
  return new SourceError(
    'SOURCE_READ_FAILED',
    `${what} ended early: ${bytesDelivered} of ${expected} bytes`,
    { bytesDelivered, expected },
  );
}

function tooLong(what: string, expected: number): SourceError {
  return new SourceError(
    'SOURCE_CHANGED',
    `${what} sent more than the ${expected} bytes announced`,
    { expected },
  );
}
