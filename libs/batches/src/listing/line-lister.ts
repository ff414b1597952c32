import type { Source, SourceVersion } from '@hashq/sources';

import type { ByteSource, LinePosition } from './lines';
import { LiveIterator } from './live-iterator';
import type { ListedItem, Lister, ListPage } from './types';

/** The file opened at an offset, with the identity of what is read when the source knows it. */
export interface OpenedFile {
  stream: ByteSource;
  version?: SourceVersion | null;
  close?(): Promise<void>;
}

/**
 * Opens the file (an S3 object, a file, a URL) at a byte offset, pinned to `pinned` when given
 * (the version seen when the listing started: a changed file fails instead of being read on at an
 * offset that no longer means the same line).
 */
export type OpenAt = (
  offset: number,
  pinned: SourceVersion | null,
) => Promise<OpenedFile | ByteSource>;

/** OpenAt for a @hashq/sources Source: a ranged, version-pinned read (SOURCE_CHANGED otherwise). */
export function openSourceAt(source: Source): OpenAt {
  return async (offset, pinned) => {
    const opened = await source.open(offset, pinned);
    return { stream: opened.stream, version: opened.version, close: () => opened.close() };
  };
}

type Parse = (
  stream: ByteSource,
  from: LinePosition,
) => AsyncIterable<ListedItem & { next: LinePosition }>;

interface Positioned {
  item: ListedItem;
  cursor: string;
}

/** A line cursor: where the next record starts, and the version of the file being read. */
export interface LineCursor extends LinePosition {
  version: SourceVersion | null;
}

/**
 * A Lister over a line-based file (a manifest, a SUM file). The cursor is the position after the
 * last item's record and the file's version, `<line>:<byteOffset>[:<version>]`: a resumed listing
 * opens the file at that offset, pinned to that version, and reads on, never the lines before it.
 */
export class LineLister implements Lister {
  private readonly live: LiveIterator<Positioned>;

  constructor(open: OpenAt, parse: Parse) {
    this.live = new LiveIterator(
      (cursor) => chunked(read(open, parse, cursor)),
      (positioned) => positioned.cursor,
    );
  }

  async page(cursor: string | null, max: number): Promise<ListPage> {
    const page = await this.live.page(cursor, max);
    return { items: page.items.map((positioned) => positioned.item), cursor: page.cursor };
  }

  /** Releases the file kept open for the next page. */
  close(): Promise<void> {
    return this.live.close();
  }
}

async function* read(
  open: OpenAt,
  parse: Parse,
  cursor: string | null,
): AsyncGenerator<Positioned> {
  const from = cursor === null ? { line: 1, offset: 0, version: null } : parseLineCursor(cursor);
  const opened = await open(from.offset, from.version);
  const file: OpenedFile = isOpenedFile(opened) ? opened : { stream: opened };
  const version = file.version ?? from.version;
  try {
    for await (const { next, ...item } of parse(file.stream, from))
      yield { item, cursor: formatLineCursor({ ...next, version }) };
  } finally {
    await file.close?.();
  }
}

function isOpenedFile(opened: OpenedFile | ByteSource): opened is OpenedFile {
  return 'stream' in opened;
}

export function formatLineCursor(cursor: LineCursor): string {
  const position = `${cursor.line}:${cursor.offset}`;
  if (cursor.version === null) return position;
  return `${position}:${Buffer.from(JSON.stringify(cursor.version)).toString('base64url')}`;
}

export function parseLineCursor(cursor: string): LineCursor {
  const match = /^(\d+):(\d+)(?::([A-Za-z0-9_-]+))?$/.exec(cursor);
  if (!match) throw new RangeError(`not a line cursor: ${cursor}`);
  const version = match[3]
    ? (JSON.parse(Buffer.from(match[3], 'base64url').toString()) as SourceVersion)
    : null;
  return { line: Number(match[1]), offset: Number(match[2]), version };
}

/** Items in chunks of up to 256, as LiveIterator takes them. */
async function* chunked<T>(items: AsyncIterable<T>): AsyncGenerator<T[]> {
  let chunk: T[] = [];
  for await (const item of items) {
    chunk.push(item);
    if (chunk.length >= 256) {
      yield chunk;
      chunk = [];
    }
  }
  if (chunk.length > 0) yield chunk;
}
