/**
 * Serves pages from an ordered walk that can start after any cursor and yields its items in
 * chunks (a folder's batch, an S3 page). The walk of the last page is kept open, so asking for the
 * next page with the cursor just returned goes on where it stopped (no folder re-read, no S3 page
 * re-fetched); any other cursor starts a fresh walk after it. Items are read ahead, so the page
 * that holds the last item already says the listing is finished.
 */
export class LiveIterator<T> {
  private live: { cursor: string | null; walk: AsyncIterator<T[]>; ahead: T[] } | null = null;

  constructor(
    private readonly start: (cursor: string | null) => AsyncIterator<T[]>,
    private readonly cursorOf: (item: T) => string,
  ) {}

  /** Ends the walk kept for the next page (its open files, its connections). */
  async close(): Promise<void> {
    const live = this.live;
    this.live = null;
    await live?.walk.return?.();
  }

  async page(cursor: string | null, max: number): Promise<{ items: T[]; cursor: string | null }> {
    if (!Number.isInteger(max) || max < 1) throw new RangeError('page size must be >= 1');
    let live = this.live;
    this.live = null; // a walk that throws is never reused
    if (live === null || live.cursor !== cursor) {
      await live?.walk.return?.();
      live = { cursor, walk: this.start(cursor), ahead: [] };
    }
    let items = live.ahead;
    while (items.length <= max) {
      const next = await live.walk.next();
      if (next.done) return { items, cursor: null };
      items = items.length === 0 ? next.value : items.concat(next.value);
    }
    const last = this.cursorOf(items[max - 1]);
    this.live = { cursor: last, walk: live.walk, ahead: items.slice(max) };
    return { items: items.slice(0, max), cursor: last };
  }
}
