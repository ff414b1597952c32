/** Bytes fed to the hashers and not hashed yet beyond which the writer waits. */
export const FEED_HIGH_BYTES = 2 * 1024 * 1024;
/** The backlog the writer waits for: enough to keep the hashers busy while it reads more. */
export const FEED_LOW_BYTES = 1024 * 1024;

/**
 * Most bytes x hashers absorbed at once on the event loop, by idle hashers: a PATCH body of a
 * few KiB is hashed as it arrives (some µs), without the thread pool. Socket reads of a large
 * body (64 KiB) are above it and are fed to the pool.
 */
export const SYNC_HASH_BYTES = 32 * 1024;

/** Something that absorbs bytes on the thread pool as they are fed (SessionHashers, a Hasher). */
export interface Absorber {
  /** Queues a chunk (not modified afterwards) after those fed before; returns the backlog. */
  feed(chunk: Buffer): number;
  /** Resolves once the backlog is at most `bytes`. */
  fedBelow(bytes: number): Promise<unknown>;
  /** Resolves once everything fed is absorbed. */
  flushFed(): Promise<unknown>;
  /** Absorbs at once on this thread; without it, every byte is fed. */
  update?(chunk: Buffer): unknown;
  /** Hashers behind this absorber (1 if unset): the cost of update(). */
  readonly count?: number;
}

/**
 * Feeds a request body to its hashers as it arrives: each chunk written (a socket read: a fresh
 * buffer, never reused) is queued, not copied, and the hashers' pool tasks hash their queues in
 * order while the next reads arrive, without a round trip through the event loop between chunks
 * (Hasher.feed). Once FEED_HIGH_BYTES wait, write() returns a promise: the caller pauses the body
 * until FEED_LOW_BYTES are left, so memory stays at a few MiB per body and the hashers never run
 * dry while the socket is read again. A small read on idle hashers is hashed at once.
 */
export class HashPipeline {
  /** Offset of the session after every byte written. */
  private written: number;
  private feeding = false;
  /** Largest piece hashed at once on this thread (0: an absorber lacks update()). */
  private readonly syncBytes: number;

  constructor(
    private readonly absorbers: Absorber[],
    offset: number,
  ) {
    this.written = offset;
    const sync = absorbers.every((absorber) => absorber.update);
    const hashers = absorbers.reduce((sum, absorber) => sum + (absorber.count ?? 1), 0);
    this.syncBytes = sync ? Math.floor(SYNC_HASH_BYTES / Math.max(1, hashers)) : 0;
  }

  /** Bytes written so far, hashed or not. */
  get offset(): number {
    return this.written;
  }

  /** True from the first chunk fed to the pool until drain() settles. */
  get busy(): boolean {
    return this.feeding;
  }

  /** Takes `chunk` (not to be modified afterwards); a promise: wait for it before the next write. */
  write(chunk: Buffer): Promise<void> | undefined {
    this.written += chunk.length;
    if (!this.feeding && chunk.length <= this.syncBytes) {
      for (const absorber of this.absorbers) absorber.update!(chunk);
      return undefined;
    }
    this.feeding = true;
    let backlog = 0;
    for (const absorber of this.absorbers) backlog = Math.max(backlog, absorber.feed(chunk));
    if (backlog <= FEED_HIGH_BYTES) return undefined;
    return Promise.all(this.absorbers.map((absorber) => absorber.fedBelow(FEED_LOW_BYTES))).then(
      () => undefined,
    );
  }

  /** Hashes everything written; afterwards the hashers hold `offset` bytes and may be serialized. */
  async drain(): Promise<void> {
    if (!this.feeding) return;
    await Promise.all(this.absorbers.map((absorber) => absorber.flushFed()));
    this.feeding = false;
  }

  /** Waits until no hasher reads a chunk written here; the pipeline is not used afterwards. */
  async release(): Promise<void> {
    await this.drain().catch(() => undefined);
  }
}
