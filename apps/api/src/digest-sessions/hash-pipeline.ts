/** Most body bytes gathered while the hashers are busy: beyond this, the writer waits. */
export const BATCH_BYTES = 1024 * 1024;
/** Fewest bytes handed to idle hashers at once: each hand-over is a thread-pool round trip. */
export const MIN_HAND_BYTES = 256 * 1024;
/** Full-size batch buffers kept for the next PATCHes (a fresh buffer page-faults on its first fill). */
const SPARE_BUFFERS = 8;
const spares: Buffer[] = [];
const EMPTY = Buffer.alloc(0);

/**
 * Most bytes x hashers absorbed at once on the event loop, by idle hashers: a PATCH body of a
 * few KiB is hashed as it arrives (some µs), without a batch buffer nor a thread-pool round trip.
 * Socket reads of a large body (64 KiB) are above it and go to the pool in batches.
 */
export const SYNC_HASH_BYTES = 32 * 1024;
/** Batch buffers smaller than a full one are rounded up to this. */
const BATCH_STEP = 64 * 1024;

/** Something that absorbs bytes on the thread pool (SessionHashers, a Hasher), or at once. */
export interface Absorber {
  updateAsync(chunk: Buffer): Promise<unknown>;
  /** Absorbs at once on this thread; without it, every byte goes through updateAsync. */
  update?(chunk: Buffer): unknown;
  /** Hashers behind this absorber (1 if unset): the cost of update(). */
  readonly count?: number;
}

/**
 * Feeds a request body to its hashers, which run on libuv's thread pool while the next bytes
 * arrive. Socket reads are copied into a batch buffer (a read of MIN_HAND_BYTES or more that finds
 * the hashers idle goes to them as it is); the batch is handed over once it holds MIN_HAND_BYTES
 * and the hashers are idle, or the moment they are done with the previous one. A full batch makes
 * write() return a promise: the caller pauses the body until the batch has been handed over. So
 * the hashers stay busy, a hasher never reads a buffer being filled, and what is left to hash when
 * the body ends is only what arrived during the last hash.
 */
export class HashPipeline {
  /** Offset of the session after every byte handed to the hashers. */
  private fed: number;
  private batch: Buffer = EMPTY;
  private fill = 0;
  private inFlight?: Promise<void>;
  /** Largest piece hashed at once on this thread (0: all absorbers lack update()). */
  private readonly syncBytes: number;

  /**
   * @param expected bytes the body will bring, if known (Content-Length): a small body gets a
   *   batch buffer of its size, not a full one (a thousand small PATCHes at once would otherwise
   *   hold a MiB each)
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

  write(chunk: Buffer): Promise<void> | undefined {
    this.expected -= chunk.length;
    return this.put(chunk);
  }

  private put(chunk: Buffer): Promise<void> | undefined {
    if (!this.inFlight && this.fill === 0) {
      if (chunk.length <= this.syncBytes) {
        for (const absorber of this.absorbers) absorber.update!(chunk);
        this.fed += chunk.length;
        return undefined;
      }
      if (chunk.length >= MIN_HAND_BYTES) {
        this.hand(chunk, chunk.length);
        return undefined;
      }
    }
    if (this.batch.length === 0) this.batch = this.newBatch(chunk.length);
    const copied = chunk.copy(this.batch, this.fill);
    this.fill += copied;
    if (!this.inFlight && this.fill >= MIN_HAND_BYTES) this.feed();
    if (copied === chunk.length && (this.batch.length === 0 || this.fill < this.batch.length)) {
      return undefined;
    }
    // a full batch: by the time the hashers are done, it has been handed over and a new one starts
    if (!this.inFlight) this.feed(); // a small one (the end of a body), idle hashers
    const rest = chunk.subarray(copied);
    return (this.inFlight as Promise<void>).then(() =>
      rest.length > 0 ? this.put(rest) : undefined,
    );
  }

  /** Hashes everything written; afterwards the hashers hold `offset` bytes and may be serialized. */
  async drain(): Promise<void> {
    while (this.inFlight || this.fill > 0) {
      if (!this.inFlight) this.feed();
      await this.inFlight;
    }
  }

  /** Gives the batch buffers back once no hasher reads them; the pipeline is not used afterwards. */
  async release(): Promise<void> {
    await this.inFlight?.catch(() => undefined);
    keep(this.batch);
    this.batch = EMPTY;
  }

  /** A full batch buffer (a spare if there is one), or a smaller one for what is left of a small body. */
  private newBatch(first: number): Buffer {
    const left = first + Math.max(0, this.expected);
    if (left >= BATCH_BYTES) return spares.pop() ?? Buffer.allocUnsafeSlow(BATCH_BYTES);
    return Buffer.allocUnsafe(Math.ceil(left / BATCH_STEP) * BATCH_STEP);
  }

  private feed(): void {
    const buffer = this.batch;
    const bytes = this.fill;
    this.batch = EMPTY; // taken again by the next write that needs one
    this.fill = 0;
    this.hand(buffer.subarray(0, bytes), bytes, buffer);
  }

  /** Hands bytes to every hasher; once they are done, what gathered meanwhile follows at once. */
  private hand(view: Buffer, bytes: number, buffer?: Buffer): void {
    this.fed += bytes;
    const done: Promise<void> = Promise.all(
      this.absorbers.map((absorber) => absorber.updateAsync(view)),
    ).then(() => {
      if (buffer) keep(buffer);
      this.inFlight = undefined;
      if (this.fill >= MIN_HAND_BYTES) this.feed();
    });
    this.inFlight = done;
  }
}

function keep(buffer: Buffer): void {
  if (buffer.length === BATCH_BYTES && spares.length < SPARE_BUFFERS) spares.push(buffer);
}
