import type { Queue } from 'bullmq';
import { ReplyError } from 'ioredis';
import type { Logger } from 'pino';

import type { JobsRepository } from './jobs.repository';
import {
  ENQUEUE_REFUSED,
  HASH_GROUP_JOB,
  type HashGroupJobData,
  type HashJobData,
  hashJobData,
  hashJobOptions,
} from './queue';
import { TimeoutError, withTimeout } from './with-timeout';

export interface ReconcilerOptions {
  /** Time between two rounds (one round also runs at start). */
  intervalMs: number;
  /** A Redis call that takes longer ends the round (Redis is away); the next round retries. */
  redisTimeoutMs?: number;
  /** MAX_JOB_ATTEMPTS: a job that has taken this many leases is failed (ATTEMPTS_EXHAUSTED), not re-enqueued. */
  maxAttempts: number;
}

/** BullMQ states in which a job will still run (or runs): nothing to do for it. */
const LIVE_STATES = new Set([
  'waiting',
  'wait',
  'delayed',
  'prioritized',
  'active',
  'waiting-children',
  'paused',
]);

/**
 * PostgreSQL is the truth, Redis only dispatches: every job PostgreSQL calls `queued`, or
 * `running` with a lease nobody renews any more (lease_expires_at in the past or unset), must
 * have a live BullMQ job. This puts back the ones Redis lost (flushed, restarted without
 * persistence, failed over, an enqueue that never arrived), at start and every `intervalMs`.
 * The API and every worker run it; re-adding is idempotent because the BullMQ id is the job id
 * (two rounds adding the same job at once add it once), and a worker leasing the job bumps the
 * fence, so a stale holder can no longer write. A running job whose lease is alive is left
 * alone: its worker is at it. A job that has used MAX_JOB_ATTEMPTS leases (a crash loop) is not
 * re-enqueued: it ends 'failed' with ATTEMPTS_EXHAUSTED (see attempts.ts). A job BullMQ refuses
 * (e.g. a priority beyond BullMQ's range, stored by an older version) ends 'failed' with
 * ENQUEUE_REFUSED and the round goes on: one such job never keeps the others out of the queue.
 */
export class JobQueueReconciler {
  private timer?: NodeJS.Timeout;
  private running?: Promise<number>;
  private stopped = false;

  constructor(
    protected readonly jobs: JobsRepository,
    protected readonly queue: Queue<HashJobData | HashGroupJobData>,
    protected readonly logger: Logger,
    private readonly options: ReconcilerOptions,
  ) {}

  /** One round now, then one every intervalMs (the timer does not keep the process alive). */
  start(): void {
    if (this.timer || this.stopped) return;
    void this.reconcileQuietly();
    this.timer = setInterval(() => void this.reconcileQuietly(), this.options.intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and waits for a round in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    while (this.running) await this.running.catch(() => undefined);
  }

  /** Nest lifecycle (when provided as a Nest provider). */
  onApplicationBootstrap(): void {
    this.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.stop();
  }

  /**
   * One round: re-enqueues the jobs that need it and returns how many. Rounds of one process never
   * overlap: a call during a round in progress waits for it first, and counts what it restored too.
   */
  async reconcile(): Promise<number> {
    const previous = this.running;
    const earlier = previous ? await previous.catch(() => 0) : 0;
    while (this.running) await this.running.catch(() => 0); // another caller got in first
    if (this.stopped) return earlier;
    const round = this.round();
    this.running = round;
    try {
      return earlier + (await round);
    } finally {
      if (this.running === round) this.running = undefined;
    }
  }

  private async round(): Promise<number> {
    let restored = 0;
    let exhausted = 0;
    let grouped: Set<string> | undefined; // read once, at the first job without a live job of its own
    for (const id of await this.jobs.dispatchableIds()) {
      if (this.stopped) break;
      const existing = await this.redis(this.queue.getJob(id));
      if (existing) {
        const state = await this.redis(existing.getState());
        if (LIVE_STATES.has(state)) continue; // 'unknown': a job hash in no list would never run
      }
      grouped ??= await this.groupedJobIds();
      if (grouped.has(id)) continue;
      // Looked up again now: the job may have finished, or been leased, since the list was read.
      const job = await this.jobs.findDispatchable(id);
      if (!job) continue;
      if (job.attempts >= this.options.maxAttempts) {
        if (await this.jobs.failExhausted(id, this.options.maxAttempts)) exhausted++;
        continue;
      }
      // A completed/failed (or orphaned) BullMQ job with this id would make add() a no-op (e.g. the
      // worker could not record the outcome in PostgreSQL): it goes, and the job is added afresh.
      if (existing) await this.redis(existing.remove());
      const refusal = await this.add(id, job.priority, job.totalBytes);
      if (!refusal) {
        restored++;
      } else if (await this.jobs.failEnqueueRefused(id, refusal.message)) {
        this.logger.error(
          { jobId: id, err: refusal.message, code: ENQUEUE_REFUSED },
          'BullMQ refused the job: failed',
        );
      }
    }
    if (restored > 0) this.logger.warn({ restored }, 're-enqueued jobs missing from Redis');
    if (exhausted > 0) {
      this.logger.warn(
        { exhausted, maxAttempts: this.options.maxAttempts },
        'jobs failed with ATTEMPTS_EXHAUSTED instead of re-enqueued',
      );
    }
    return restored;
  }

  /** The jobs that live job groups (HASH_GROUP_JOB) will run. */
  private async groupedJobIds(): Promise<Set<string>> {
    const live = await this.redis(
      this.queue.getJobs(['wait', 'prioritized', 'delayed', 'active', 'waiting-children']),
    );
    const ids = new Set<string>();
    for (const job of live) {
      if (job?.name === HASH_GROUP_JOB)
        for (const id of (job.data as HashGroupJobData).jobIds) ids.add(id);
    }
    return ids;
  }

  /**
   * Adds the job to BullMQ. Returns BullMQ's refusal when it will not take this job while Redis is
   * fine (its options break BullMQ's rules); Redis trouble (no answer in time, an error reply such
   * as OOM or READONLY, no answer to a read right after) is thrown and ends the round, as before.
   */
  private async add(
    id: string,
    priority: number | undefined,
    totalBytes: number | null,
  ): Promise<Error | null> {
    try {
      const data = hashJobData(id, totalBytes);
      await this.redis(this.queue.add('hash', data, hashJobOptions(id, priority)));
      return null;
    } catch (err) {
      if (err instanceof TimeoutError || err instanceof ReplyError || !(await this.redisAnswers()))
        throw err;
      return err instanceof Error ? err : new Error(String(err));
    }
  }

  private async redisAnswers(): Promise<boolean> {
    try {
      await this.redis(this.queue.getVersion());
      return true;
    } catch {
      return false;
    }
  }

  /** A Redis call that does not answer in time (Redis away or overloaded: not the job's fault) ends the round. */
  private redis<T>(call: Promise<T>): Promise<T> {
    return withTimeout(call, this.options.redisTimeoutMs ?? 2000, 'redis');
  }

  /** The timer's round: skipped while one runs, errors logged (the next round retries). */
  private async reconcileQuietly(): Promise<void> {
    if (this.running || this.stopped) return;
    try {
      await this.reconcile();
    } catch (err) {
      this.logger.warn(
        { err: (err as Error).message },
        'queue reconciliation failed; retrying later',
      );
    }
  }
}
