/** Most body bytes gathered while the hashers are busy: beyond this, the writer waits. */
export const BATCH_BYTES = 1024 * 1024;
/** Fewest bytes handed to idle hashers at once: each hand-over is a thread-pool round trip. */
export const MIN_HAND_BYTES = 256 * 1024;
/** Full-size batch buffers kept for the next PATCHes (a fresh buffer page-faults on its first fill). */
const SPARE_BUFFERS = 8;
const spares: Buffer[] = [];
const EMPTY = Buffer.alloc(0);

/** Something that absorbs bytes on the thread pool (SessionHashers, a Hasher). */
export interface Absorber {
  updateAsync(chunk: Buffer): Promise<unknown>;
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

  constructor(
    private readonly absorbers: Absorber[],
    offset: number,
  ) {
    this.fed = offset;
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
    if (!this.inFlight && this.fill === 0 && chunk.length >= MIN_HAND_BYTES) {
      this.hand(chunk, chunk.length);
      return undefined;
    }
    if (this.batch.length === 0) this.batch = spares.pop() ?? Buffer.allocUnsafeSlow(BATCH_BYTES);
    const copied = chunk.copy(this.batch, this.fill);
    this.fill += copied;
    if (!this.inFlight && this.fill >= MIN_HAND_BYTES) this.feed();
    if (copied === chunk.length && this.fill < BATCH_BYTES) return undefined;
    // a full batch: by the time the hashers are done, it has been handed over and a new one starts
    const rest = chunk.subarray(copied);
    return (this.inFlight as Promise<void>).then(() =>
      rest.length > 0 ? this.write(rest) : undefined,
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
