import type { OpenedSource } from './source';
import { SourceError } from './source-error';

/** Bounds every read of a source (SOURCE_MAX_BYTES, SOURCE_MIN_BYTES_PER_INTERVAL, SOURCE_PROGRESS_INTERVAL_MS). */
export interface ReadLimits {
  /** Largest object a job may hash, in bytes. */
  maxBytes: number;
  /** Bytes the source must deliver per interval spent waiting on it; 0 disables the check. */
  minBytesPerInterval: number;
  progressIntervalMs: number;
}

/**
 * Watches one read of a source, whatever its type: an `abort` (a cancel) ends a
 * blocked read at once, a source slower than the minimum progress fails with
 * SOURCE_TOO_SLOW, an object larger than the maximum fails with SOURCE_TOO_LARGE
 * (before any byte is read when its size is declared, else as soon as the count
 * passes the limit). A tripped read is closed, which ends the pending I/O.
 *
 * Progress is measured only while the caller waits for a chunk (time spent
 * hashing or writing a checkpoint is not the source's fault), on the pieces the
 * source reports through `onBytes` as they arrive, before they fill a chunk.
 */
export class ReadGuard {
  private windowBytes = 0;
  private windowWaitedMs = 0;
  private waitingSince: number | null = null;
  private timer: NodeJS.Timeout | undefined;
  private trip: ((error: unknown) => void) | undefined;

  constructor(
    private readonly limits: ReadLimits,
    private readonly signal?: AbortSignal,
  ) {}

  /** OpenOptions.onBytes for the source: every piece as it arrives. */
  readonly onBytes = (count: number): void => {
    this.windowBytes += count;
  };

  /**
   * `opened` (read from `offset`) with the limits applied; closes it and throws
   * when its declared size is over the maximum.
   */
  async watch(opened: OpenedSource, offset: number): Promise<OpenedSource> {
    if (opened.size !== null && opened.size > this.limits.maxBytes) {
      await opened.close();
      throw this.tooLarge({ size: opened.size });
    }
    return { ...opened, stream: this.chunks(opened, offset) };
  }

  private async *chunks(opened: OpenedSource, offset: number): AsyncGenerator<Buffer> {
    const chunks = opened.stream[Symbol.asyncIterator]();
    let position = offset;
    for (;;) {
      const { value, done } = await this.waitFor(chunks.next(), opened);
      if (done) return;
      position += value.length;
      if (position > this.limits.maxBytes) {
        await opened.close();
        throw this.tooLarge({ bytesRead: position });
      }
      yield value;
    }
  }

  /** The pending read, unless an abort or the progress check ends it first (then the source is closed). */
  private async waitFor<T>(pending: Promise<T>, opened: OpenedSource): Promise<T> {
    pending.catch(() => undefined); // a read ended by close() after a trip rejects unobserved
    let onAbort: (() => void) | undefined;
    const tripped = new Promise<never>((_, reject) => {
      this.trip = reject;
      onAbort = () => reject(this.signal!.reason);
      if (this.signal?.aborted) onAbort();
      this.signal?.addEventListener('abort', onAbort, { once: true });
    });
    this.startWaiting();
    try {
      const result = await Promise.race([pending, tripped]);
      this.stopWaiting();
      return result;
    } catch (err) {
      await opened.close().catch(() => undefined);
      throw err;
    } finally {
      clearTimeout(this.timer);
      this.waitingSince = null;
      this.signal?.removeEventListener('abort', onAbort!);
      this.trip = undefined;
    }
  }

  private startWaiting(): void {
    if (this.limits.minBytesPerInterval === 0) return;
    this.waitingSince = performance.now();
    this.timer = setTimeout(
      () => this.checkProgress(),
      this.limits.progressIntervalMs - this.windowWaitedMs,
    );
  }

  /** A chunk arrived: the waiting time counts; an interval completed on the way is checked now. */
  private stopWaiting(): void {
    if (this.waitingSince === null) return;
    this.windowWaitedMs += performance.now() - this.waitingSince;
    const slow =
      this.windowWaitedMs >= this.limits.progressIntervalMs ? this.endWindow() : undefined;
    if (slow) throw slow;
  }

  /** A whole interval spent waiting: enough bytes → a new window; too few → the read fails. */
  private checkProgress(): void {
    this.windowWaitedMs += performance.now() - this.waitingSince!;
    this.waitingSince = performance.now();
    const slow = this.endWindow();
    if (slow) return this.trip?.(slow);
    this.timer = setTimeout(() => this.checkProgress(), this.limits.progressIntervalMs);
  }

  /** Closes the current window: the error when it saw too few bytes, else undefined (a new window starts). */
  private endWindow(): SourceError | undefined {
    const { minBytesPerInterval, progressIntervalMs } = this.limits;
    if (this.windowBytes < minBytesPerInterval) {
      const message = `source delivered fewer than ${minBytesPerInterval} bytes in ${progressIntervalMs} ms`;
      const details = { bytes: this.windowBytes, minBytesPerInterval, progressIntervalMs };
      return new SourceError('SOURCE_TOO_SLOW', message, details);
    }
    this.windowBytes = 0;
    this.windowWaitedMs = 0;
    return undefined;
  }

  private tooLarge(details: Record<string, number>): SourceError {
    return new SourceError(
      'SOURCE_TOO_LARGE',
      `source is larger than the ${this.limits.maxBytes} bytes allowed`,
      {
        ...details,
        maxBytes: this.limits.maxBytes,
      },
    );
  }
}
