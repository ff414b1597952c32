import type { ByteSource, LinePosition } from './lines';
import { LiveIterator } from './live-iterator';
import type { ListedItem, Lister, ListPage } from './types';

/** Opens the file (an S3 object, a file, a URL) at a byte offset: a ranged read. */
export type OpenAt = (offset: number) => Promise<ByteSource>;

type Parse = (
  stream: ByteSource,
  from: LinePosition,
) => AsyncIterable<ListedItem & { next: LinePosition }>;

/**
 * A Lister over a line-based file (a manifest, a SUM file). The cursor is the position after the
 * last item's record, `<line>:<byteOffset>`: a resumed listing opens the file at that offset and
 * reads on, never the lines before it.
 */
export class LineLister implements Lister {
  private readonly live: LiveIterator<ListedItem & { next: LinePosition }>;

  constructor(open: OpenAt, parse: Parse) {
    this.live = new LiveIterator(
      (cursor) => chunked(this.read(open, parse, cursor)),
      (item) => formatLineCursor(item.next),
    );
  }

  async page(cursor: string | null, max: number): Promise<ListPage> {
    const page = await this.live.page(cursor, max);
    return { items: page.items.map(({ next: _next, ...item }) => item), cursor: page.cursor };
  }

  private async *read(
    open: OpenAt,
    parse: Parse,
    cursor: string | null,
  ): AsyncGenerator<ListedItem & { next: LinePosition }> {
    const from = cursor === null ? { line: 1, offset: 0 } : parseLineCursor(cursor);
    yield* parse(await open(from.offset), from);
  }
}

export function formatLineCursor(position: LinePosition): string {
  return `${position.line}:${position.offset}`;
}

export function parseLineCursor(cursor: string): LinePosition {
  const match = /^(\d+):(\d+)$/.exec(cursor);
  if (!match) throw new RangeError(`not a line cursor: ${cursor}`);
  return { line: Number(match[1]), offset: Number(match[2]) };
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
