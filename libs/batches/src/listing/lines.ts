/** Where a line starts: its 1-based number and the byte offset of its first byte. */
export interface LinePosition {
  line: number;
  offset: number;
}

/** One line of a stream, without its `\n` (a `\r` before it is kept: the format decides). */
export interface Line {
  bytes: Buffer;
  /** Number and offset of its first byte. */
  start: LinePosition;
  /** Where the line after it starts. */
  next: LinePosition;
  /** Longer than the limit: `bytes` holds only its beginning. */
  tooLong?: boolean;
}

/** A stream's chunks (a Readable, a fetch body, or simply [content]). */
export type ByteSource = AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>;

/** A line of a manifest or SUM file is refused beyond this (an S3 key is at most 1,024 bytes). */
export const MAX_LINE_BYTES = 64 * 1024;

/**
 * The lines of a byte stream, read chunk by chunk: memory holds one line, never the file. `from` is
 * where the stream starts in the whole file (a resumed read opens it at `from.offset`), so every
 * line knows its number and byte offset for the cursor. A line over `maxLineBytes` is returned cut,
 * marked tooLong, and the rest of it skipped.
 */
export async function* readLines(
  stream: ByteSource,
  from: LinePosition = { line: 1, offset: 0 },
  maxLineBytes = MAX_LINE_BYTES,
): AsyncGenerator<Line> {
  let parts: Buffer[] = [];
  let held = 0;
  let tooLong = false;
  let start = { ...from };
  let offset = from.offset;
  const finish = (bytes: Buffer, next: LinePosition): Line => {
    const line: Line = { bytes, start, next, ...(tooLong ? { tooLong } : {}) };
    parts = [];
    held = 0;
    tooLong = false;
    start = next;
    return line;
  };
  const keep = (piece: Buffer) => {
    if (tooLong) return;
    if (held + piece.length > maxLineBytes) {
      piece = piece.subarray(0, maxLineBytes - held);
      tooLong = true;
    }
    parts.push(piece);
    held += piece.length;
  };
  for await (const chunk of stream) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk);
    let from = 0;
    for (let nl = buffer.indexOf(10); nl !== -1; nl = buffer.indexOf(10, from)) {
      keep(buffer.subarray(from, nl));
      offset += nl + 1 - from;
      from = nl + 1;
      yield finish(Buffer.concat(parts), { line: start.line + 1, offset });
    }
    keep(buffer.subarray(from));
    offset += buffer.length - from;
  }
  if (held > 0 || tooLong) yield finish(Buffer.concat(parts), { line: start.line + 1, offset });
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The line as text, or null when its bytes are not UTF-8. */
export function lineText(bytes: Buffer): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** The bytes of `line` without a byte order mark when it is the first line of the file. */
export function withoutBom(line: Line): Buffer {
  return line.start.offset === 0 && line.bytes.subarray(0, 3).equals(BOM)
    ? line.bytes.subarray(3)
    : line.bytes;
}
