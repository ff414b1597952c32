import type { LeasedJob } from '@hashq/jobs';
import {
  changedFields,
  type OpenedSource,
  ReadGuard,
  type ReadLimits,
  sameVersion,
  type Source,
  SourceError,
  type SourceFactory,
  type SourceVersion,
} from '@hashq/sources';
import type { Logger } from 'pino';

import type { Checkpoint, CheckpointStore } from './checkpoint-store';
import { expectedDigestError } from './expected-digests';
import { fileRangeHashers, type FileRangeHost, fileRangeLoop } from './file-range-run';
import { StateInvalidError } from './job-errors';
import { JobHashers } from './job-hashers';
import { RunTimings } from './run-timings';
import { prepareS3Checksum, type RunHashers, s3ChecksumError } from './s3-checksum';
import type { RunMetrics } from './worker-metrics';
import { WriteBehind } from './write-behind';

export interface RunSettings {
  chunkBytes: number;
  checkpointBytes: number;
  checkpointSeconds: number;
  limits: ReadLimits;
}

/**
 * Progress/lease/cancel poll interval between checkpoints, chunk or no chunk: a cancel is seen
 * within about two of them (plus a PostgreSQL round trip) even while a read is blocked.
 */
const HEARTBEAT_MS = 250;

/** How a run ended when it did not throw. */
export type RunOutcome = 'succeeded' | 'failed' | 'canceled' | 'handed-back';

/** Why the read loop stopped. */
type LoopEnd = 'end' | 'cancel' | 'hand-back';

/**
 * One attempt at one job, from the lease to a final status (or to a hand-back
 * on shutdown): restore → open at the offset → read ahead / hash / heartbeat
 * per chunk → checkpoint → finalize. Every write goes through the fenced store.
 */
export class HashRun {
  private bytesRead: number;
  private position: number;
  private lastCheckpoint = { offset: 0, at: Date.now() };
  /** Offset of the last committed checkpoint. */
  private durableOffset: number;
  private lastWriteAt = 0;
  private readonly timings = new RunTimings();
  private readonly writes = new WriteBehind();
  /**
   * The source's identity asked again once its last byte has arrived (verifyUnchanged), sent while
   * the last chunks are hashed.
   */
  private identityAtEnd: Promise<SourceVersion> | null = null;
  /** Aborted on a cancel request (or a failed write): ends a read that is waiting on the source. */
  private readonly reading = new AbortController();

  constructor(
    private readonly job: LeasedJob,
    private readonly store: CheckpointStore,
    private readonly sources: SourceFactory,
    private readonly settings: RunSettings,
    private readonly log: Logger,
    private readonly stopRequested: () => boolean,
    private readonly metrics?: RunMetrics,
  ) {
    this.bytesRead = job.bytesRead;
    this.position = job.checkpointOffset;
    this.lastCheckpoint.offset = job.checkpointOffset;
    this.durableOffset = job.checkpointOffset;
  }

  /** Bytes read over all attempts, as far as this run knows (for error paths). */
  get totalBytesRead(): number {
    return this.bytesRead;
  }

  async execute(): Promise<RunOutcome> {
    const base = await this.prepareHashers();
    this.timings.mark('prepared');
    const source = this.sources.create(this.job.source);
    const s3Checksum = await prepareS3Checksum(this.job, source, this.store); // job option s3Checksum
    const resuming = this.job.checkpointOffset > 0;
    const guard = new ReadGuard(this.settings.limits, this.reading.signal);
    const raw = await source.open(
      this.job.checkpointOffset,
      resuming ? this.job.sourceVersion : null,
      {
        chunkBytes: this.settings.chunkBytes,
        onBytes: guard.onBytes,
      },
    );
    const opened = await guard.watch(raw, this.job.checkpointOffset); // a declared size over the maximum fails here
    this.timings.mark('opened');
    this.bytesRead += opened.discardedBytes ?? 0; // re-sent by a server that ignored Range, skipped
    try {
      // A fresh job that one read covers (small files) skips the start write: its final write
      // records the size and version instead, so the job costs two statements, lease and finish.
      const oneRead = !resuming && opened.size !== null && opened.size <= this.settings.chunkBytes;
      // The start write commits beside the first chunk's read and hash (the write-behind slot:
      // no heartbeat or checkpoint before it; a cancel or a lost lease is seen at the first
      // chunk boundary), not before the first byte.
      if (!oneRead) this.startWrite(opened);
      const hashers = s3Checksum?.attach(base, opened) ?? base;
      this.log[oneRead ? 'debug' : 'info'](
        { offset: this.position, totalBytes: opened.size, resumed: resuming },
        resuming ? 'resuming from checkpoint' : 'starting',
      );
      const stop = await this.hashStream(opened, hashers, source);
      if (stop) return stop;
      this.timings.mark('hashed');
      await this.verifyUnchanged(source, opened);
      this.timings.mark('verified');
      return await this.finalize(hashers, opened);
    } finally {
      await opened.close().catch(() => undefined);
      await this.writes.idle(); // nothing of this run may land after the caller records the outcome
    }
  }

  private startWrite(opened: OpenedSource): void {
    const facts = { totalBytes: opened.size, sourceVersion: opened.version };
    this.writeBehind(() => this.store.start(this.job, facts), false);
    this.timings.mark('started');
  }

  private async prepareHashers(): Promise<JobHashers> {
    const { job } = this;
    if (job.checkpointOffset === 0) return JobHashers.create(job.algorithms, job.options);
    const states = await this.store.loadStates(job);
    let hashers: JobHashers;
    try {
      hashers = JobHashers.restore(job.algorithms, states);
    } catch (err) {
      throw new StateInvalidError(
        `checkpointed state cannot be restored: ${(err as Error).message}`,
      );
    }
    if (hashers.bytesHashed() !== job.checkpointOffset) {
      throw new StateInvalidError('checkpointed state does not match the checkpoint offset');
    }
    return hashers;
  }

  /**
   * The read/hash loop with its pulse (heartbeats, cancel); returns an outcome when it stopped
   * early, undefined at the end of the source.
   */
  private async hashStream(
    opened: OpenedSource,
    hashers: RunHashers,
    source: Source,
  ): Promise<RunOutcome | undefined> {
    const pulse = setInterval(() => this.pulse(), HEARTBEAT_MS);
    let end: LoopEnd;
    try {
      const file = fileRangeHashers(opened, hashers); // a local file: read and hashed natively
      end = await (file
        ? fileRangeLoop(this.fileRangeHost(hashers, opened), opened, file)
        : this.readLoop(opened, hashers, source));
    } finally {
      clearInterval(pulse); // no heartbeat may race the final write
    }
    if (end === 'hand-back') return this.handBack(hashers, opened);
    if (end === 'cancel') return this.cancel();
    await this.writes.settle();
    return this.writes.cancelRequested ? this.cancel() : undefined;
  }

  /** Every HEARTBEAT_MS, between chunks or during a blocked read: a heartbeat when due; a cancel aborts the read. */
  private pulse(): void {
    if (this.writes.cancelRequested || this.writes.failed) return this.reading.abort();
    if (this.writes.busy || Date.now() - this.lastWriteAt < HEARTBEAT_MS) return;
    const progress = { bytesDone: this.position, bytesRead: this.bytesRead };
    this.writeBehind(() => this.store.heartbeat(this.job, progress), false);
  }

  /** Starts a fenced write in the write-behind slot; the heartbeat counts from it. */
  private writeBehind(
    write: () => Promise<{ cancelRequested: boolean }>,
    isCheckpoint: boolean,
  ): void {
    this.lastWriteAt = Date.now();
    this.writes.start(write, isCheckpoint);
  }

  /**
   * Reading (one chunk ahead), hashing (all algorithms at once on the thread pool) and a fenced
   * write (heartbeat or checkpoint) overlap.
   *
   * Invariant at every chunk boundary: the last COMMITTED checkpoint is at most
   * CHECKPOINT_BYTES behind the hashed position, so a crash re-reads at most
   * CHECKPOINT_BYTES plus the chunk being hashed. To keep it without waiting on
   * PostgreSQL, a checkpoint starts a little early (up to two chunks) and commits
   * while those chunks are hashed; only when it is late does the loop wait.
   */
  private async readLoop(
    opened: OpenedSource,
    hashers: RunHashers,
    source: Source,
  ): Promise<LoopEnd> {
    const chunks = opened.stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
    let next = this.readNextChunk(chunks);
    for (;;) {
      const read = await this.awaitChunk(next);
      if (!read) return 'cancel';
      if (read.done) return 'end';
      const chunk = read.value;
      if (this.position + chunk.length === opened.size) this.askIdentityAtEnd(source, opened);
      // Hashing is handed to the pool before the next read is requested: that request's synchronous
      // part (generator resume, FileHandle.read set-up, ~0.1 ms) would otherwise delay every chunk.
      const hashing = this.timings.timed('hash', hashers.update(chunk));
      next = this.readNextChunk(chunks); // chunk N+1 is read while chunk N is hashed
      await hashing;
      this.position += chunk.length;
      this.metrics?.bytesHashed(chunk.length);
      const stop = await this.betweenChunks(hashers, opened);
      if (stop === 'cancel') return 'cancel';
      if (stop === 'hand-back') {
        // The next chunk is read already: hash it too, so the next worker re-reads nothing.
        const last = await this.awaitChunk(next);
        if (!last) return 'cancel';
        if (!last.done) {
          await hashers.update(last.value);
          this.position += last.value.length;
          this.metrics?.bytesHashed(last.value.length);
        }
        return 'hand-back';
      }
    }
  }

  /**
   * The work between two chunks (or file ranges): wait for a checkpoint that would fall behind,
   * surface a failed write, honour a cancel or a shutdown, start a checkpoint when one is due.
   */
  private async betweenChunks(
    hashers: RunHashers,
    opened: OpenedSource,
  ): Promise<'cancel' | 'hand-back' | undefined> {
    if (this.writes.checkpointInFlight && this.wouldLag())
      await this.timings.timed('writeWait', this.writes.settle());
    this.writes.throwIfFailed();
    if (this.writes.cancelRequested) return 'cancel';
    if (this.stopRequested()) return 'hand-back';
    if (this.checkpointDue()) {
      // a heartbeat is in the way
      if (this.writes.busy && this.wouldLag())
        await this.timings.timed('writeWait', this.writes.settle());
      if (!this.writes.busy) this.startCheckpoint(hashers, opened);
    }
    return undefined;
  }

  /** Whether one more chunk would leave the last committed checkpoint over CHECKPOINT_BYTES behind. */
  private wouldLag(): boolean {
    const { chunkBytes, checkpointBytes } = this.settings;
    return this.position + chunkBytes - this.durableOffset > checkpointBytes;
  }

  /** readLoop's work between chunks, for fileRangeLoop (file-range-run.ts) between ranges. */
  private fileRangeHost(hashers: RunHashers, opened: OpenedSource): FileRangeHost {
    // the states at the position, taken when the last range ended: the next one is being hashed
    let states = new Map<string, Buffer>();
    const captured: RunHashers = {
      update: (chunk) => hashers.update(chunk),
      digests: () => hashers.digests(),
      serialize: () => states,
    };
    return {
      rangeBytes: this.settings.chunkBytes,
      limits: this.settings.limits,
      signal: this.reading.signal,
      position: () => this.position,
      read: (count) => {
        this.bytesRead += count;
      },
      hashed: (count) => {
        this.position += count;
        this.metrics?.bytesHashed(count);
      },
      capture: () => {
        states = hashers.serialize();
      },
      timed: (stage, work) => this.timings.timed(stage, work),
      aborted: () => {
        this.writes.throwIfFailed();
        return 'cancel';
      },
      between: () => this.betweenChunks(captured, opened),
    };
  }

  /** The next chunk, or null when the pulse aborted the read for a cancel (a failed write is thrown). */
  private async awaitChunk(
    next: Promise<IteratorResult<Buffer>>,
  ): Promise<IteratorResult<Buffer> | null> {
    try {
      return await this.timings.timed('readWait', next);
    } catch (err) {
      if (!this.reading.signal.aborted) throw err;
      this.writes.throwIfFailed();
      return null;
    }
  }

  /**
   * Requests the next chunk. Its bytes count as read (`bytes_read`) as soon as
   * they arrive, hashed or not: after a crash, what the next attempt reads again
   * shows in `bytes_read - total_bytes`.
   */
  private readNextChunk(chunks: AsyncIterator<Buffer>): Promise<IteratorResult<Buffer>> {
    const pending = chunks.next();
    pending.then(
      (result) => {
        if (!result.done) this.bytesRead += result.value.length;
      },
      () => undefined, // the loop sees the error; never an unhandled rejection after a stop
    );
    return pending;
  }

  /** Time, or bytes minus the head start that lets the commit overlap hashing. */
  private checkpointDue(): boolean {
    if (this.writes.checkpointInFlight) return false;
    const { chunkBytes, checkpointBytes, checkpointSeconds } = this.settings;
    const headStart = Math.min(2, Math.floor(checkpointBytes / chunkBytes / 2)) * chunkBytes;
    const bytes = this.position - this.lastCheckpoint.offset;
    const seconds = (Date.now() - this.lastCheckpoint.at) / 1000;
    return bytes >= checkpointBytes - headStart || seconds >= checkpointSeconds;
  }

  /** Snapshot now (offset + serialized states), commit behind the hashing. */
  private startCheckpoint(hashers: RunHashers, opened: OpenedSource): void {
    const checkpoint = this.snapshot(hashers, opened);
    this.lastCheckpoint = { offset: checkpoint.offset, at: Date.now() };
    this.writeBehind(async () => {
      const result = await this.save(checkpoint, false);
      this.durableOffset = checkpoint.offset;
      return result;
    }, true);
  }

  private snapshot(hashers: RunHashers, opened: OpenedSource): Checkpoint {
    return {
      offset: this.position,
      bytesRead: this.bytesRead,
      sourceVersion: opened.version,
      states: hashers.serialize(),
    };
  }

  private async save(
    checkpoint: Checkpoint,
    handBack: boolean,
  ): Promise<{ cancelRequested: boolean }> {
    const started = process.hrtime.bigint();
    const result = await this.store.save(this.job, checkpoint, handBack);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    this.timings.checkpointSaved(ms);
    this.metrics?.checkpointSaved(ms / 1000);
    this.log.info(
      { offset: checkpoint.offset, bytesRead: checkpoint.bytesRead, ms, handBack },
      'checkpoint saved',
    );
    return result;
  }

  /** Graceful shutdown: save the current position and give the job back as 'queued'. */
  private async handBack(hashers: RunHashers, opened: OpenedSource): Promise<RunOutcome> {
    await this.writes.settle();
    await this.save(this.snapshot(hashers, opened), true);
    this.log.info({ offset: this.position }, 'handed back on shutdown');
    return 'handed-back';
  }

  private async cancel(): Promise<RunOutcome> {
    await this.writes.settle();
    await this.store.cancel(this.job, this.bytesRead);
    this.log.info({ checkpointOffset: this.durableOffset }, 'canceled');
    return 'canceled';
  }

  /**
   * A source truncated or rewritten during the read must not yield a digest. A file is checked on
   * its descriptor (never by path again); the details name what changed, not its inode or mtime.
   */
  private async verifyUnchanged(source: Source, opened: OpenedSource): Promise<void> {
    const now = await (this.identityAtEnd ?? this.currentIdentity(source, opened));
    // A source that told no length (a chunked HTTP body) ended where its stream ended: that is
    // its size, to compare with one the source tells now (e.g. a 206's Content-Range total).
    const size = opened.size ?? this.position;
    const version =
      opened.size === null && now.size !== null ? { ...opened.version, size } : opened.version;
    if (this.position !== size || !sameVersion(now, version)) {
      throw new SourceError('SOURCE_CHANGED', 'source changed while it was read', {
        changed: changedFields(version, now),
        size: opened.size,
        bytesHashed: this.position,
      });
    }
  }

  /** The last byte has arrived: the identity check need not wait for the last chunks' hashing. */
  private askIdentityAtEnd(source: Source, opened: OpenedSource): void {
    this.identityAtEnd = this.currentIdentity(source, opened);
    this.identityAtEnd.catch(() => undefined); // awaited by verifyUnchanged, unless the run stops
  }

  private currentIdentity(source: Source, opened: OpenedSource): Promise<SourceVersion> {
    return opened.currentVersion?.() ?? source.currentVersion();
  }

  private async finalize(hashers: RunHashers, opened: OpenedSource): Promise<RunOutcome> {
    const digests = hashers.digests();
    const error =
      expectedDigestError(digests, this.job.options.expected) ?? s3ChecksumError(digests);
    await this.store.finish(this.job, {
      status: error ? 'failed' : 'succeeded',
      digests,
      totalBytes: opened.size ?? this.position,
      bytesRead: this.bytesRead,
      error,
      sourceVersion: opened.version,
    });
    this.timings.mark('finished');
    const status = error ? 'failed' : 'succeeded';
    const totals = { totalBytes: this.position, bytesRead: this.bytesRead, status };
    this.log.info({ ...totals, ...this.timings.summary() }, 'finished');
    return error ? 'failed' : 'succeeded';
  }
}
