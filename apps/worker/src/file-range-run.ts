import { FileReadError, type Hasher, updateFromFile } from '@hashq/native';
import { type OpenedSource, ReadGuard, type ReadLimits, SourceError } from '@hashq/sources';

import type { RunStage } from './run-timings';

/** What the file range loop needs from its run (HashRun). */
export interface FileRangeHost {
  /** Bytes per native call: the chunk size, so checkpoints fall where they do for streams. */
  readonly rangeBytes: number;
  readonly limits: ReadLimits;
  /** Aborted on a cancel (or a failed write): ends the wait for a range. */
  readonly signal: AbortSignal;
  /** Offset the next range starts at (the hashed position). */
  position(): number;
  /**
   * `count` bytes are being read (a range was started; negative: a range came back short). They
   * count as read while they are read, as a stream's chunk read ahead counts when it arrives.
   */
  read(count: number): void;
  /** `count` more bytes are hashed (the position moves). */
  hashed(count: number): void;
  /**
   * The hashers are idle and hold the states at the position about to be reported: keep them
   * (hashers.serialize()) for a checkpoint taken in between(), while the next range is hashed.
   */
  capture(): void;
  timed<T>(stage: RunStage, work: Promise<T>): Promise<T>;
  /**
   * What the stream loop does between chunks (write lag, failed write, cancel, shutdown,
   * checkpoint from the captured states): 'cancel' or 'hand-back' to stop, undefined to go on.
   */
  between(): Promise<'cancel' | 'hand-back' | undefined>;
  /** The wait for a range was aborted: throws a failed write's error, else 'cancel'. */
  aborted(): 'cancel';
}

/**
 * The Hashers to feed natively from the file's own descriptor, or null when the run must use the
 * stream: a source without a descriptor (not a local file) or hashers that are not plain.
 */
export function fileRangeHashers(
  opened: OpenedSource,
  hashers: unknown,
): { fd: number; list: Hasher[] } | null {
  if (opened.fd === undefined || opened.size === null) return null;
  const list = (hashers as { list?: () => Hasher[] }).list?.();
  return list && list.length > 0 ? { fd: opened.fd, list } : null;
}

/**
 * A length marker for the ReadGuard: the bytes of a range went from the file to the hashers on one
 * pool thread (updateFromFile), so the guard sees only how many arrived. Never written or read;
 * untouched pages of it cost no memory.
 */
let markerBuffer = Buffer.alloc(0);
function marker(length: number): Buffer {
  if (markerBuffer.length < length) markerBuffer = Buffer.allocUnsafeSlow(length);
  return markerBuffer.subarray(0, length);
}

/**
 * The read/hash loop of a local file: each range of `rangeBytes` is read from the descriptor opened
 * beneath the roots (never the path again) and hashed into every hasher on ONE libuv pool thread
 * (updateFromFile: from a mapping of the page cache, or pread into a small buffer). As the stream
 * loop reads a chunk ahead, the next range starts as soon as one ends (its bytes count as read), so
 * the work between ranges (checkpoint, heartbeat, cancel checks) overlaps hashing; a checkpoint
 * uses the states captured when the range ended. The ReadGuard watches each range as it watches a
 * chunk (cancel, SOURCE_TOO_SLOW, SOURCE_TOO_LARGE). A short read (the file shrank) ends the loop;
 * the run's end-of-read check then fails it SOURCE_CHANGED. On a hand-back the range under way is
 * hashed and none is started after it, so the hashers are idle for the hand-back's own snapshot.
 */
export async function fileRangeLoop(
  host: FileRangeHost,
  opened: OpenedSource,
  target: { fd: number; list: Hasher[] },
): Promise<'end' | 'cancel' | 'hand-back'> {
  const size = opened.size!;
  const guard = new ReadGuard(host.limits, host.signal);
  let stopping = false;
  const start = (at: number) => {
    const wanted = Math.min(host.rangeBytes, size - at);
    host.read(wanted);
    const pending = readRange(target, at, wanted).then((got) => ({ wanted, got }));
    pending.catch(() => undefined); // awaited below; never unhandled when the loop stopped first
    return pending;
  };
  async function* ranges(): AsyncGenerator<Buffer> {
    let at = host.position();
    let pending = at < size ? start(at) : null;
    while (pending) {
      const { wanted, got } = await pending;
      host.read(got - wanted);
      guard.onBytes(got);
      if (got === 0) return;
      at += got;
      host.capture(); // idle: the states at `at`
      pending = got === wanted && at < size && !stopping ? start(at) : null;
      yield marker(got);
    }
  }
  const watched = await guard.watch({ ...opened, stream: ranges() }, host.position());
  const it = watched.stream[Symbol.asyncIterator]();
  /** The next range hashed: true, or false at the end; null when a cancel aborted the wait. */
  const next = async (): Promise<boolean | null> => {
    let read: IteratorResult<Buffer>;
    try {
      read = await host.timed('hash', it.next());
    } catch (err) {
      if (host.signal.aborted) return null;
      throw err;
    }
    if (read.done) return false;
    host.hashed(read.value.length);
    return true;
  };
  for (;;) {
    const more = await next();
    if (more === null) return host.aborted();
    if (!more) return 'end';
    const stop = await host.between();
    if (stop === 'hand-back') {
      // as the stream loop hashes the chunk it read ahead: the range under way, and no other
      stopping = true;
      if ((await next()) === null) return host.aborted();
      return 'hand-back';
    }
    if (stop) return stop;
  }
}
/** One range into the hashers; a failed read is the source's fault (retried), as for streams. */
async function readRange(
  target: { fd: number; list: Hasher[] },
  offset: number,
  length: number,
): Promise<number> {
  try {
    return await updateFromFile(target.list, target.fd, offset, length);
  } catch (err) {
    if (!(err instanceof FileReadError)) throw err;
    throw new SourceError('SOURCE_READ_FAILED', err.message, { errno: err.code, offset });
  }
}
