import { jobStateBinding, SealedStateError, type StateSealer } from '@hashq/crypto';
import { PreparedStatement, rawRows, StatementBatcher } from '@hashq/database';
import type { DigestValue, LeasedJob } from '@hashq/jobs';
import type { SourceVersion } from '@hashq/sources';
import type { DataSource } from 'typeorm';

import { type JobError, LeaseLostError } from './job-errors';
import { type OutageRetryPolicy, retryWhileUnavailable } from './outage-retry';

export interface Checkpoint {
  offset: number;
  bytesRead: number;
  sourceVersion: SourceVersion;
  /** Serialized hash states per algorithm (sensitive: plaintext tail). */
  states: ReadonlyMap<string, Buffer>;
}

export interface FinalResult {
  status: 'succeeded' | 'failed';
  digests: Record<string, DigestValue>;
  totalBytes: number;
  bytesRead: number;
  error?: JobError;
  /** The version read, when no start() recorded it (a job that one read covers). */
  sourceVersion?: SourceVersion;
}

export interface FinishItem {
  job: LeasedJob;
  result: FinalResult;
}

/** OutageRetryPolicy whose callbacks also learn the job. */
export type StoreOutagePolicy = Omit<OutageRetryPolicy, 'onRetry' | 'onRecovered'> & {
  onRetry?(
    error: unknown,
    attempt: number,
    delayMs: number,
    elapsedMs: number,
    job: LeasedJob,
  ): void;
  onRecovered?(attempts: number, elapsedMs: number, job: LeasedJob): void;
};

/**
 * The worker's writes under the lease it holds (JobsRepository.lease takes it) or, for a job
 * group, under the fence it read (finishQueued), and the only class touching job_states. Each write is guarded by the fence taken with the lease
 * (`WHERE id = $1 AND fence = $2`): when it matches no row, the lease was lost and LeaseLostError
 * is thrown before anything else is written. A checkpoint writes jobs and job_states in ONE
 * statement (see fenced): that statement is the durability design, so the fenced UPDATEs on jobs
 * live here and not in JobsRepository, which owns every other statement on jobs.
 *
 * Hash states are sealed (StateSealer) before they are written and opened when
 * loaded. Each is bound to the job, its algorithm, the checkpoint offset and the
 * fence of the lease that wrote it (jobs.checkpoint_fence, written with the
 * offset): a state opens only beside the jobs row of its own checkpoint. When a
 * job ends, a trigger deletes its states in the same statement (see migrations/).
 */
export class CheckpointStore {
  private readonly jobs: string;
  private readonly states: string;
  /** The grouped, fenced final UPDATE (finishRows). */
  private readonly finishStatement: PreparedStatement;
  /** The final UPDATE of a job group's jobs (finishQueued). */
  private readonly groupFinishStatement: PreparedStatement;
  /** Jobs of this worker that end at the same time: one UPDATE per group (small jobs end in bursts). */
  private readonly finishes = new StatementBatcher<FinishItem, boolean>(
    (items) => this.finishRows(items),
    (item) => item.job.id,
    2,
    256,
  );

  /**
   * `outage`: how heartbeats and checkpoints ride out a PostgreSQL outage (see
   * retryWhileUnavailable); without it a failed write fails at once. Only connection
   * errors are retried, and a retry is the very same fenced statement, so a worker
   * whose lease was taken over meanwhile still writes nothing (LeaseLostError).
   */
  constructor(
    private readonly db: DataSource,
    schema: string,
    private readonly sealer: StateSealer,
    private readonly leaseSeconds: number,
    private readonly outage?: StoreOutagePolicy,
  ) {
    const quoted = `"${schema.replace(/"/g, '""')}"`;
    this.jobs = `${quoted}.jobs`;
    this.states = `${quoted}.job_states`;
    this.finishStatement = finishStatement(
      this.jobs,
      `source_version = coalesce(f.source_version, j.source_version),
       lease_owner = NULL, lease_expires_at = NULL`,
      `j.status = 'running'`,
    );
    this.groupFinishStatement = finishStatement(
      this.jobs,
      `source_version = f.source_version, fence = j.fence + 1, attempts = j.attempts + 1,
       started_at = coalesce(j.started_at, now())`,
      `j.status = 'queued' AND j.admission IS DISTINCT FROM 'held'`,
    );
  }

  /**
   * The states of the job's checkpoint, opened. SealedStateError (STATE_INVALID) when one does not
   * open with its binding, or when the checkpoint does not come from an earlier lease.
   */
  async loadStates(job: LeasedJob): Promise<Map<string, Buffer>> {
    const fence = job.checkpointFence;
    if (fence === null || fence >= job.fence) {
      const written = fence === null ? 'no fence on record' : `fence ${fence}`;
      throw new SealedStateError(
        `checkpoint of job ${job.id} has ${written}, not one before the lease's ${job.fence}`,
      );
    }
    const rows: { algorithm: string; state: Buffer }[] = await this.db.query(
      `SELECT algorithm, state FROM ${this.states} WHERE job_id = $1`,
      [job.id],
    );
    return new Map(
      rows.map((row) => [
        row.algorithm,
        this.sealer.open(
          row.state,
          jobStateBinding(job.id, row.algorithm, job.checkpointOffset, fence),
        ),
      ]),
    );
  }

  /** Records what is being read; counts a resume when continuing from a checkpoint. */
  async start(
    job: LeasedJob,
    opened: { totalBytes: number | null; sourceVersion: SourceVersion },
  ): Promise<{ cancelRequested: boolean }> {
    const resumed = job.checkpointOffset > 0;
    return this.fenced(
      job,
      `total_bytes = $3, source_version = $4, bytes_done = checkpoint_offset,
       resumes = resumes + $5, error_code = NULL, error_message = NULL, error_details = NULL`,
      [opened.totalBytes, JSON.stringify(opened.sourceVersion), resumed ? 1 : 0],
    );
  }

  /**
   * Progress and lease renewal between checkpoints; also reports a cancel request.
   * `greatest`: a heartbeat may commit after a later checkpoint of the same attempt.
   */
  heartbeat(
    job: LeasedJob,
    progress: { bytesDone: number; bytesRead: number },
  ): Promise<{ cancelRequested: boolean }> {
    return this.retrying(job, () =>
      this.fenced(
        job,
        `bytes_done = greatest(bytes_done, $3), bytes_read = greatest(bytes_read, $4),
         lease_expires_at = now() + make_interval(secs => $5)`,
        [progress.bytesDone, progress.bytesRead, this.leaseSeconds],
      ),
    );
  }

  /**
   * Writes offset + states atomically (one statement: the states are upserted
   * only if the fenced UPDATE matched). With `handBack`, the job also goes back
   * to 'queued' (graceful shutdown: the next worker continues from here).
   */
  save(
    job: LeasedJob,
    checkpoint: Checkpoint,
    handBack = false,
  ): Promise<{ cancelRequested: boolean }> {
    // Sealed once: a retry sends the very same bytes.
    const sealed = new Map(
      [...checkpoint.states].map(([name, state]) => [
        name,
        this.sealer.seal(state, jobStateBinding(job.id, name, checkpoint.offset, job.fence)),
      ]),
    );
    // Retried only while the job stays 'running' (a hand-back that committed but whose answer was
    // lost would look like a lost lease on the retry); the checkpoint itself is idempotent.
    if (!handBack) return this.retrying(job, () => this.write(job, checkpoint, sealed, false));
    return this.write(job, checkpoint, sealed, true);
  }

  private write(
    job: LeasedJob,
    checkpoint: Checkpoint,
    sealed: ReadonlyMap<string, Buffer>,
    handBack: boolean,
  ): Promise<{ cancelRequested: boolean }> {
    return this.fenced(
      job,
      `checkpoint_offset = $3, checkpoint_fence = $2, bytes_done = ${handBack ? '$3' : 'greatest(bytes_done, $3)'},
       bytes_read = greatest(bytes_read, $4), source_version = $5, checkpointed_at = now(),
       ${handBack ? `status = 'queued', lease_owner = NULL, lease_expires_at = NULL` : `lease_expires_at = now() + make_interval(secs => $6)`}`,
      [
        checkpoint.offset,
        checkpoint.bytesRead,
        JSON.stringify(checkpoint.sourceVersion),
        ...(handBack ? [] : [this.leaseSeconds]),
      ],
      {
        sql: (first) => `INSERT INTO ${this.states} (job_id, algorithm, state)
          SELECT $1, a.algorithm, a.state FROM unnest($${first}::text[], $${first + 1}::bytea[]) AS a(algorithm, state)
          WHERE EXISTS (SELECT 1 FROM fenced_job)
          ON CONFLICT (job_id, algorithm) DO UPDATE SET state = EXCLUDED.state`,
        params: [[...sealed.keys()], [...sealed.values()]],
      },
    );
  }

  /**
   * Final digests and status in one statement (the trigger deletes the states with it), fenced
   * like every write here; the finishes of jobs ending at the same time share it.
   */
  async finish(job: LeasedJob, result: FinalResult): Promise<void> {
    const landed = await this.finishes.submit({ job, result });
    if (!landed) throw new LeaseLostError(job.id, job.fence);
  }

  /** One fenced UPDATE for many finishes: true for each job whose row it changed. */
  private async finishRows(items: FinishItem[]): Promise<boolean[]> {
    const rows = await this.finishStatement.rows<{ id: string }>(this.db, [finishRecords(items)]);
    const landed = new Set(rows.map((row) => row.id));
    return items.map((item) => landed.has(item.job.id));
  }

  /**
   * The results of a job group's jobs, read queued and never leased (JobsRepository.queuedOfGroup):
   * each lands only if its job is still queued with the fence it was read with, so a cancel, or a
   * lease taken by the single-job path meanwhile, wins. The write counts as the job's one attempt.
   * Returns the ids of the jobs it ended.
   */
  async finishQueued(items: FinishItem[]): Promise<Set<string>> {
    const rows = await this.groupFinishStatement.rows<{ id: string }>(this.db, [
      finishRecords(items),
    ]);
    return new Set(rows.map((row) => row.id));
  }

  /** Permanent failure: the job ends 'failed' with its code. */
  async fail(job: LeasedJob, error: JobError, bytesRead: number): Promise<void> {
    await this.fenced(
      job,
      `status = 'failed', error_code = $3, error_message = $4, error_details = $5, bytes_read = greatest(bytes_read, $6),
       finished_at = now(), lease_owner = NULL, lease_expires_at = NULL`,
      [
        error.code,
        error.message,
        error.details === undefined ? null : JSON.stringify(error.details),
        bytesRead,
      ],
    );
  }

  /** Cancel honoured: the job ends 'canceled'; its checkpoint offset stays on record, its states go. */
  async cancel(job: LeasedJob, bytesRead: number): Promise<void> {
    await this.fenced(
      job,
      `status = 'canceled', bytes_done = checkpoint_offset, bytes_read = greatest(bytes_read, $3),
       finished_at = now(), lease_owner = NULL, lease_expires_at = NULL`,
      [bytesRead],
    );
  }

  /** Requeues the job after a transient error (BullMQ retries it): 'queued', the last checkpoint kept. */
  async requeue(job: LeasedJob, error: JobError, bytesRead: number): Promise<void> {
    await this.fenced(
      job,
      `status = 'queued', error_code = $3, error_message = $4, bytes_done = checkpoint_offset,
       bytes_read = greatest(bytes_read, $5), lease_owner = NULL, lease_expires_at = NULL`,
      [error.code, error.message, bytesRead],
    );
  }

  /** The write, retried through a PostgreSQL outage when a policy is set (idempotent writes only). */
  private retrying<T>(job: LeasedJob, write: () => Promise<T>): Promise<T> {
    if (!this.outage || this.outage.maxMs <= 0) return write();
    const policy = this.outage;
    return retryWhileUnavailable(write, {
      ...policy,
      onRetry: (error, attempt, delayMs, elapsedMs) =>
        policy.onRetry?.(error, attempt, delayMs, elapsedMs, job),
      onRecovered: (attempts, elapsedMs) => policy.onRecovered?.(attempts, elapsedMs, job),
    });
  }

  /**
   * One guarded UPDATE ($1 = id, $2 = fence, then the caller's parameters),
   * optionally with a companion statement that runs in the same statement (so
   * atomically) and only when the UPDATE matched: it may refer to `fenced_job`.
   * A job that is no longer 'running' (e.g. canceled directly) counts as lost too.
   */
  private async fenced(
    job: LeasedJob,
    assignments: string,
    params: unknown[],
    companion?: { sql: (firstParam: number) => string; params: unknown[] },
  ): Promise<{ cancelRequested: boolean }> {
    const update = `UPDATE ${this.jobs} SET ${assignments}, updated_at = now()
        WHERE id = $1 AND fence = $2 AND status = 'running'
        RETURNING cancel_requested`;
    const sql = companion
      ? `WITH fenced_job AS (${update}), companion AS (${companion.sql(params.length + 3)})
         SELECT cancel_requested FROM fenced_job`
      : update;
    const result: unknown = await this.db.query(sql, [
      job.id,
      job.fence,
      ...params,
      ...(companion?.params ?? []),
    ]);
    const [row] = rawRows<{ cancel_requested: boolean }>(result);
    if (!row) throw new LeaseLostError(job.id, job.fence);
    return { cancelRequested: row.cancel_requested };
  }
}

/**
 * A final UPDATE of many jobs at once ($1: finishRecords), fenced; `assignments` and `condition`
 * are what a leased job's finish and a job group's differ in.
 */
function finishStatement(jobs: string, assignments: string, condition: string): PreparedStatement {
  return new PreparedStatement(
    `UPDATE ${jobs} j
        SET status = f.status, digests = f.digests, total_bytes = f.total_bytes,
            bytes_done = f.total_bytes, checkpoint_offset = f.total_bytes, bytes_read = f.bytes_read,
            error_code = f.error_code, error_message = f.error_message, error_details = f.error_details,
            finished_at = now(), updated_at = now(), ${assignments}
       FROM jsonb_to_recordset($1::jsonb)
            AS f(id uuid, fence bigint, status text, digests jsonb, total_bytes bigint, bytes_read bigint,
                 error_code text, error_message text, error_details jsonb, source_version jsonb)
      WHERE j.id = f.id AND j.fence = f.fence AND ${condition}
      RETURNING j.id`,
  );
}

/** The finishes as the one JSON parameter of the final UPDATEs. */
function finishRecords(items: readonly FinishItem[]): string {
  return JSON.stringify(
    items.map(({ job, result }) => ({
      id: job.id,
      fence: job.fence,
      status: result.status,
      digests: result.digests,
      total_bytes: result.totalBytes,
      bytes_read: result.bytesRead,
      error_code: result.error?.code ?? null,
      error_message: result.error?.message ?? null,
      error_details: result.error?.details ?? null,
      source_version: result.sourceVersion ?? null,
    })),
  );
}
