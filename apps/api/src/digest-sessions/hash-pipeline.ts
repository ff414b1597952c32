/** Most body bytes gathered while the hashers are busy: beyond this, the writer waits. */
export const BATCH_BYTES = 1024 * 1024;
/** Fewest bytes handed to idle hashers at once: each hand-over is a thread-pool round trip. */
export const MIN_HAND_BYTES = 256 * 1024;

/**
 * Most bytes x hashers absorbed at once on the event loop, by idle hashers: a PATCH body of a
 * few KiB is hashed as it arrives (some µs), without a thread-pool round trip. Socket reads of a
 * large body (64 KiB) are above it and go to the pool in batches.
 */
export const SYNC_HASH_BYTES = 32 * 1024;

/** Something that absorbs bytes on the thread pool (SessionHashers, a Hasher), or at once. */
export interface Absorber {
  /** Absorbs the chunks in order on the thread pool; they are not modified meanwhile. */
  updateChunksAsync(chunks: Buffer[]): Promise<unknown>;
  /** Absorbs at once on this thread; without it, every byte goes through updateChunksAsync. */
  update?(chunk: Buffer): unknown;
  /** Hashers behind this absorber (1 if unset): the cost of update(). */
  readonly count?: number;
}

/**
 * Feeds a request body to its hashers, which run on libuv's thread pool while the next bytes
 * arrive. The chunks written (socket reads: fresh buffers, never reused) are kept as they are,
 * not copied: a batch is a list of them, handed over once it holds MIN_HAND_BYTES and the hashers
 * are idle (or the body is complete), or the moment they are done with the previous one. A batch
 * of BATCH_BYTES that still waits makes write() return a promise: the caller pauses the body until
 * it has been handed over. So the hashers stay busy, the event loop neither hashes (beyond small
 * reads on idle hashers) nor copies, memory stays at about two batches per body, and what is left
 * to hash when the body ends is only what arrived during the last hash.
 */
export class HashPipeline {
  /** Offset of the session after every byte handed to the hashers. */
  private fed: number;
  private batch: Buffer[] = [];
  private fill = 0;
  private inFlight?: Promise<void>;
  /** Largest piece hashed at once on this thread (0: all absorbers lack update()). */
  private readonly syncBytes: number;
  /** Largest rest hashed at once on this thread by drain() (0: all absorbers lack update()). */
  private readonly drainBytes: number;

  /**
   * @param expected bytes the body will bring, if known (Content-Length): a batch that completes
   *   the body is handed over at once, whatever its size
   */
  constructor(
    private readonly absorbers: Absorber[],
    offset: number,
    private expected = Infinity,
  ) {
    this.fed = offset;
    const sync = absorbers.every((absorber) => absorber.update);
    const hashers = absorbers.reduce((sum, absorber) => sum + (absorber.count ?? 1), 0);
    this.syncBytes = sync ? Math.floor(SYNC_HASH_BYTES / Math.max(1, hashers)) : 0;
    this.drainBytes = sync ? Math.floor(MIN_HAND_BYTES / Math.max(1, hashers)) : 0;
  }

  /** Bytes written so far, hashed or not. */
  get offset(): number {
    return this.fed + this.fill;
  }

  /** Bytes written but not handed to the hashers yet. */
  get waiting(): number {
    return this.fill;
  }

  get busy(): boolean {
    return this.inFlight !== undefined;
  }

  /** Takes `chunk` (not to be modified afterwards); a promise: wait for it before the next write. */
  write(chunk: Buffer): Promise<void> | undefined {
    this.expected -= chunk.length;
    if (!this.inFlight && this.fill === 0 && chunk.length <= this.syncBytes) {
      for (const absorber of this.absorbers) absorber.update!(chunk);
      this.fed += chunk.length;
      return undefined;
    }
    if (chunk.length > 0) this.batch.push(chunk);
    this.fill += chunk.length;
    if (!this.inFlight) this.next();
    // a full batch waits: by the time the hashers are done with theirs, it has been handed over
    return this.fill >= BATCH_BYTES ? this.inFlight : undefined;
  }

  /**
   * Hashes everything written; afterwards the hashers hold `offset` bytes and may be serialized.
   * A rest below a hand-over is hashed at once (some 100 µs): a thread-pool round trip, two
   * wake-ups on a busy machine, would cost more, and the commit waits for it.
   */
  async drain(): Promise<void> {
    while (this.inFlight || this.fill > 0) {
      if (!this.inFlight && this.fill <= this.drainBytes) this.absorbNow();
      else if (!this.inFlight) this.feed();
      await this.inFlight;
    }
  }

  /** Waits until no hasher reads a chunk written here; the pipeline is not used afterwards. */
  async release(): Promise<void> {
    await this.inFlight?.catch(() => undefined);
    this.batch = [];
  }

  /**
   * Idle hashers: a batch of MIN_HAND_BYTES goes to them; so does the end of a body of known
   * length, at once, or hashed here when small (see drain()).
   */
  private next(): void {
    if (this.fill >= MIN_HAND_BYTES) this.feed();
    else if (this.fill > 0 && this.expected <= 0) {
      if (this.fill <= this.drainBytes) this.absorbNow();
      else this.feed();
    }
  }

  private absorbNow(): void {
    for (const chunk of this.batch) {
      for (const absorber of this.absorbers) absorber.update!(chunk);
    }
    this.fed += this.fill;
    this.batch = [];
    this.fill = 0;
  }

  /** Hands the batch to every hasher; once they are done, what gathered meanwhile follows at once. */
  private feed(): void {
    const chunks = this.batch;
    this.fed += this.fill;
    this.batch = [];
    this.fill = 0;
    this.inFlight = Promise.all(
      this.absorbers.map((absorber) => absorber.updateChunksAsync(chunks)),
    ).then(() => {
      this.inFlight = undefined;
      this.next();
    });
  }
}
