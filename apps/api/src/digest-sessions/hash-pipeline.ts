/** Body bytes gathered before they go to the hashers: one thread-pool round trip per batch, not per socket read. */
export const BATCH_BYTES = 1024 * 1024;
/** Full-size batch buffers kept for the next PATCHes (a fresh buffer page-faults on its first fill). */
const SPARE_BUFFERS = 8;
const spares: Buffer[] = [];
const EMPTY = Buffer.alloc(0);

/** Something that absorbs bytes on the thread pool (SessionHashers, a Hasher). */
export interface Absorber {
  updateAsync(chunk: Buffer): Promise<unknown>;
}

/**
 * Feeds a request body to its hashers in batches: socket reads are copied into a batch buffer,
 * and a full batch is hashed on libuv's thread pool while the next one fills. At most one batch
 * is hashed at a time, so a hasher never reads the buffer being filled; a full batch that has to
 * wait for the hashers makes write() return a promise (the caller pauses the body meanwhile).
 */
export class HashPipeline {
  /** Offset of the session after every byte written so far has been hashed. */
  private fed: number;
  private batch: Buffer;
  private fill = 0;
  private inFlight?: Promise<void>;

  /** `expected`: body bytes announced (Content-Length), so that a small body gets a small buffer. */
  constructor(
    private readonly absorbers: Absorber[],
    offset: number,
    expected = BATCH_BYTES,
  ) {
    this.fed = offset;
    this.batch = expected >= BATCH_BYTES ? (spares.pop() ?? Buffer.allocUnsafeSlow(BATCH_BYTES)) : Buffer.allocUnsafe(Math.max(expected, 1));
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
    if (this.fill === this.batch.length) this.grow();
    const copied = chunk.copy(this.batch, this.fill);
    this.fill += copied;
    const rest = chunk.subarray(copied);
    if (this.fill < BATCH_BYTES && rest.length === 0) return undefined;
    if (this.fill < BATCH_BYTES) return this.write(rest);
    if (!this.inFlight) {
      this.feed();
      return rest.length > 0 ? this.write(rest) : undefined;
    }
    return this.inFlight.then(() => {
      this.feed();
      return rest.length > 0 ? this.write(rest) : undefined;
    });
  }

  /** Hashes everything written; afterwards the hashers hold `offset` bytes and may be serialized. */
  async drain(): Promise<void> {
    await this.inFlight;
    if (this.fill > 0) this.feed();
    await this.inFlight;
  }

  /** Gives the buffers back once no hasher reads them; the pipeline is not used afterwards. */
  async release(): Promise<void> {
    await this.inFlight?.catch(() => undefined);
    keep(this.batch);
  }

  private feed(): void {
    const buffer = this.batch;
    const bytes = this.fill;
    this.batch = EMPTY; // the next write takes a buffer: a body that ends here needs none
    this.fill = 0;
    this.fed += bytes;
    const view = buffer.subarray(0, bytes);
    const done: Promise<void> = Promise.all(this.absorbers.map((absorber) => absorber.updateAsync(view))).then(() => {
      keep(buffer);
      if (this.inFlight === done) this.inFlight = undefined;
    });
    this.inFlight = done;
  }

  /** A full-size buffer for the next bytes (a body longer than announced outgrows its small first one). */
  private grow(): void {
    const larger = spares.pop() ?? Buffer.allocUnsafeSlow(BATCH_BYTES);
    this.batch.copy(larger, 0, 0, this.fill);
    this.batch = larger;
  }
}

function keep(buffer: Buffer): void {
  if (buffer.length === BATCH_BYTES && spares.length < SPARE_BUFFERS) spares.push(buffer);
}
