import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type Repository } from 'typeorm';

import { JobEntity, rawRows } from '@hashq/database';

import { attemptsExhaustedAssignments } from './attempts';
import { ENQUEUE_REFUSED } from './queue';
import type { JobOptions, SourceRef } from './job-options';
import { JOB_STATUSES, JobStatus } from './job-status';

/** Queued, or running under a lease that is not alive (its worker stopped renewing it). */
const DISPATCHABLE = `(status = 'queued' OR (status = 'running' AND (lease_expires_at IS NULL OR lease_expires_at < now())))`;

export interface NewJob {
  source: SourceRef;
  algorithms: string[];
  options: JobOptions;
  totalBytes: number | null;
  idempotencyKey?: string;
  requestHash?: string;
}

export type InsertResult =
  | { kind: 'created'; job: JobEntity }
  /** A job with this Idempotency-Key exists: `sameRequest` tells a retry from a conflicting reuse. */
  | { kind: 'existing'; job: JobEntity; sameRequest: boolean };

export interface ListQuery {
  status?: JobStatus;
  limit: number;
  /** Id of the last job of the previous page. */
  after?: string;
}

export type CancelResult =
  | { kind: 'not-found' }
  /** queued → canceled at once; running → cancel_requested, the worker stops within one chunk. */
  | { kind: 'canceled' | 'requested' | 'already-finished'; job: JobEntity };

/**
 * Reads and writes the jobs table for the API (and whatever the worker shares with it).
 * PostgreSQL is the system of record; every state change here is one conditional UPDATE so
 * concurrent API calls and workers cannot undo each other.
 */
@Injectable()
export class JobsRepository {
  private readonly jobs: Repository<JobEntity>;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.jobs = dataSource.getRepository(JobEntity);
  }

  async insert(job: NewJob): Promise<InsertResult> {
    const rows: { id: string }[] = await this.dataSource.query(
      `INSERT INTO jobs (status, source, algorithms, options, total_bytes, idempotency_key, request_hash)
       VALUES ('queued', $1, $2, $3, $4, $5, $6)
       ON CONFLICT (idempotency_key) DO NOTHING
       RETURNING id`,
      [
        JSON.stringify(job.source),
        job.algorithms,
        JSON.stringify(job.options),
        job.totalBytes,
        job.idempotencyKey ?? null,
        job.requestHash ?? null,
      ],
    );
    if (rows.length === 1) {
      return { kind: 'created', job: await this.jobs.findOneByOrFail({ id: rows[0].id }) };
    }
    const existing = await this.jobs.findOneByOrFail({ idempotencyKey: job.idempotencyKey });
    return { kind: 'existing', job: existing, sameRequest: existing.requestHash === job.requestHash };
  }

  findById(id: string): Promise<JobEntity | null> {
    return this.jobs.findOneBy({ id });
  }

  /** Newest first; keyset pagination on (created_at, id), so pages never skip or repeat a job. */
  async list(query: ListQuery): Promise<JobEntity[]> {
    const builder = this.jobs
      .createQueryBuilder('job')
      .orderBy('job.created_at', 'DESC')
      .addOrderBy('job.id', 'DESC')
      .limit(query.limit);
    if (query.status) builder.andWhere('job.status = :status', { status: query.status });
    if (query.after) {
      builder.andWhere(
        '(job.created_at, job.id) < (SELECT cursor.created_at, cursor.id FROM jobs cursor WHERE cursor.id = :after)',
        { after: query.after },
      );
    }
    return builder.getMany();
  }

  async requestCancel(id: string): Promise<CancelResult> {
    // queued → canceled in one conditional UPDATE, so a worker leasing the job at the same moment
    // either sees 'canceled' or already holds it as 'running' (and then sees cancel_requested).
    const canceled = await this.jobs
      .createQueryBuilder()
      .update(JobEntity)
      .set({ status: JobStatus.Canceled, cancelRequested: true, finishedAt: () => 'now()' })
      .where('id = :id AND status = :queued', { id, queued: JobStatus.Queued })
      .execute();
    if (!canceled.affected) {
      await this.jobs
        .createQueryBuilder()
        .update(JobEntity)
        .set({ cancelRequested: true })
        .where('id = :id AND status = :running', { id, running: JobStatus.Running })
        .execute();
    }
    const job = await this.findById(id);
    if (!job) return { kind: 'not-found' };
    if (job.status === JobStatus.Canceled) return { kind: 'canceled', job };
    if (job.status === JobStatus.Running) return { kind: 'requested', job };
    return { kind: 'already-finished', job };
  }

  /** Number of jobs in every status (zero included). */
  async countByStatus(): Promise<Record<JobStatus, number>> {
    const rows: { status: JobStatus; count: string }[] = await this.dataSource.query(
      `SELECT status, count(*) AS count FROM jobs GROUP BY status`,
    );
    const counts = Object.fromEntries(JOB_STATUSES.map((status) => [status, 0])) as Record<JobStatus, number>;
    for (const row of rows) counts[row.status] = Number(row.count);
    return counts;
  }

  /** Bytes hashed (bytes_done) and read (bytes_read, re-reads included) over all jobs. */
  async byteTotals(): Promise<{ bytesDone: number; bytesRead: number }> {
    const [row]: { done: string; read: string }[] = await this.dataSource.query(
      `SELECT coalesce(sum(bytes_done), 0) AS done, coalesce(sum(bytes_read), 0) AS read FROM jobs`,
    );
    return { bytesDone: Number(row.done), bytesRead: Number(row.read) };
  }

  /**
   * Jobs that must have a live BullMQ job (see JobQueueReconciler): queued, or running with a lease
   * nobody renews (expired or unset). Oldest first.
   */
  async dispatchableIds(): Promise<string[]> {
    const rows: { id: string }[] = await this.dataSource.query(
      `SELECT id FROM jobs WHERE ${DISPATCHABLE} ORDER BY created_at`,
    );
    return rows.map((row) => row.id);
  }

  /**
   * The job if it is still dispatchable (same condition as dispatchableIds), with its BullMQ
   * priority and the leases it has taken.
   */
  async findDispatchable(id: string): Promise<{ id: string; priority?: number; attempts: number } | null> {
    const rows: { id: string; options: JobOptions | null; attempts: number }[] = await this.dataSource.query(
      `SELECT id, options, attempts FROM jobs WHERE id = $1 AND ${DISPATCHABLE}`,
      [id],
    );
    if (rows.length === 0) return null;
    return { id: rows[0].id, priority: rows[0].options?.priority, attempts: rows[0].attempts };
  }

  /**
   * Ends a dispatchable job that has used `maxAttempts` leases: 'failed' with ATTEMPTS_EXHAUSTED,
   * its last checkpoint kept. False when it is no longer dispatchable or still has attempts left.
   */
  async failExhausted(id: string, maxAttempts: number): Promise<boolean> {
    const result: unknown = await this.dataSource.query(
      `UPDATE jobs SET ${attemptsExhaustedAssignments('$2')}
        WHERE id = $1 AND ${DISPATCHABLE} AND attempts >= $2
        RETURNING id`,
      [id, maxAttempts],
    );
    return rawRows(result).length === 1;
  }

  /**
   * Ends a dispatchable job BullMQ refuses to take (ENQUEUE_REFUSED, e.g. a priority outside BullMQ's
   * range stored by an older version): 'failed' with BullMQ's reason, its last checkpoint kept. False
   * when it is no longer dispatchable.
   */
  async failEnqueueRefused(id: string, reason: string): Promise<boolean> {
    const result: unknown = await this.dataSource.query(
      `UPDATE jobs SET status = 'failed', fence = fence + 1, error_code = '${ENQUEUE_REFUSED}',
              error_message = 'BullMQ refused the job: ' || $2,
              error_details = jsonb_build_object('reason', $2::text, 'priority', options -> 'priority'),
              bytes_done = checkpoint_offset, finished_at = now(), lease_owner = NULL, lease_expires_at = NULL,
              updated_at = now()
        WHERE id = $1 AND ${DISPATCHABLE}
        RETURNING id`,
      [id, reason],
    );
    return rawRows(result).length === 1;
  }

  /** Ids of jobs PostgreSQL says are not finished (for re-enqueueing after Redis lost them). */
  async unfinishedIds(): Promise<string[]> {
    const rows: { id: string }[] = await this.dataSource.query(
      `SELECT id FROM jobs WHERE status IN ('queued', 'running') ORDER BY created_at`,
    );
    return rows.map((row) => row.id);
  }
}
