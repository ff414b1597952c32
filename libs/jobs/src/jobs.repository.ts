import { randomUUID } from 'node:crypto';

import { JobEntity, PreparedStatement, rawRows, StatementBatcher } from '@hashq/database';
import type { SourceSpec, SourceVersion } from '@hashq/sources';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type Repository } from 'typeorm';

import { attemptsExhaustedAssignments } from './attempts';
import type { JobOptions } from './job-options';
import { JOB_STATUSES, JobStatus } from './job-status';
import { ENQUEUE_REFUSED } from './queue';
import type { SourceRef } from './source-ref';

/** The tenant of rows made before tenants existed, and of local use without keys. */
export const DEFAULT_TENANT = 'default';

/**
 * Queued, or running under a lease that is not alive (its worker stopped renewing it); never a job
 * held for a slot of its tenant (JobAdmission enqueues it when it is admitted).
 */
const DISPATCHABLE = `(admission IS DISTINCT FROM 'held' AND (status = 'queued' OR (status = 'running' AND (lease_expires_at IS NULL OR lease_expires_at < now()))))`;

export interface NewJob {
  /** The owning tenant; `default` when not given. */
  tenantId?: string;
  source: SourceRef;
  algorithms: string[];
  options: JobOptions;
  totalBytes: number | null;
  idempotencyKey?: string;
  requestHash?: string;
}

/** A job to insert with the id it will have. */
interface InsertItem {
  id: string;
  tenantId: string;
  job: NewJob;
}

/** A lease to take (JobsRepository.lease). */
interface LeaseItem {
  jobId: string;
  owner: string;
  leaseSeconds: number;
  maxAttempts: number;
}

/** Grouped statements (inserts, leases) in flight at once (pooled connections they hold), and jobs per statement. */
const GROUP_STATEMENTS = 2;
const GROUP_MAX = 256;

/** One UPDATE for the leases a worker takes at the same time (JobsRepository.leaseRows). */
const LEASE = new PreparedStatement(
  `UPDATE jobs
      SET fence = fence + 1, status = 'running', attempts = attempts + 1,
          lease_owner = l.owner, lease_expires_at = now() + make_interval(secs => l.secs),
          started_at = coalesce(started_at, now()), updated_at = now()
     FROM unnest($1::uuid[], $2::text[], $3::float8[], $4::bigint[]) AS l(id, owner, secs, max_attempts)
    WHERE jobs.id = l.id AND jobs.status IN ('queued', 'running') AND jobs.attempts < l.max_attempts
    RETURNING jobs.id, jobs.tenant_id, jobs.fence, jobs.source, jobs.algorithms, jobs.options,
              jobs.checkpoint_offset, jobs.checkpoint_fence, jobs.source_version, jobs.bytes_read,
              jobs.attempts`,
);

/**
 * The queued jobs of a job group, read without a lease (apps/worker job-group-run.ts): their
 * results land only if they are still queued with this fence (CheckpointStore.finishQueued).
 */
const QUEUED_OF_GROUP = new PreparedStatement(
  `SELECT id, tenant_id, fence, source, algorithms, options, checkpoint_offset, checkpoint_fence,
          source_version, bytes_read, attempts
     FROM jobs
    WHERE id = ANY($1::uuid[]) AND status = 'queued' AND admission IS DISTINCT FROM 'held'`,
);

export type InsertResult =
  | { kind: 'created'; job: JobEntity }
  /** A job with this Idempotency-Key exists: `sameRequest` tells a retry from a conflicting reuse. */
  | { kind: 'existing'; job: JobEntity; sameRequest: boolean };

export interface ListQuery {
  /** Only this tenant's jobs. */
  tenantId: string;
  status?: JobStatus;
  limit: number;
  /** Id of the last job of the previous page. */
  after?: string;
}

/** A job row as the worker sees it right after taking the lease. */
export interface LeasedJob {
  id: string;
  /** The owner: its file sources are opened beneath its file_roots (TenantsRepository). */
  tenantId: string;
  fence: number;
  source: SourceSpec;
  algorithms: string[];
  options: JobOptions;
  checkpointOffset: number;
  /** Fence of the lease that wrote the checkpoint (null before the first one). */
  checkpointFence: number | null;
  sourceVersion: SourceVersion | null;
  bytesRead: number;
  attempts: number;
}

interface JobRow {
  id: string;
  tenant_id: string;
  fence: string;
  source: SourceSpec;
  algorithms: string[];
  options: LeasedJob['options'] | null;
  checkpoint_offset: string;
  checkpoint_fence: string | null;
  source_version: SourceVersion | null;
  bytes_read: string;
  attempts: number;
}

/** A jobs row as the worker works with it. */
function workerJob(row: JobRow): LeasedJob {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    fence: Number(row.fence),
    source: row.source,
    algorithms: row.algorithms,
    options: row.options ?? {},
    checkpointOffset: Number(row.checkpoint_offset),
    checkpointFence: row.checkpoint_fence === null ? null : Number(row.checkpoint_fence),
    sourceVersion: row.source_version,
    bytesRead: Number(row.bytes_read),
    attempts: row.attempts,
  };
}

export type CancelResult =
  | { kind: 'not-found' }
  /** queued → canceled at once; running → cancel_requested, the worker stops within one chunk. */
  | { kind: 'canceled' | 'requested' | 'already-finished'; job: JobEntity };

/**
 * Every statement on the jobs table but the worker's fenced writes (the worker's CheckpointStore
 * owns those, with job_states): the API's, the reconciler's, the worker's lease and its reads.
 * PostgreSQL is the system of record; every state change here is one conditional UPDATE so
 * concurrent API calls and workers cannot undo each other.
 */
@Injectable()
export class JobsRepository {
  private readonly jobs: Repository<JobEntity>;
  /** The grouped INSERT, made on first use (its RETURNING names the entity's columns). */
  private insertStatement?: PreparedStatement;
  /** Submissions of concurrent requests, one INSERT per group (items keyed by job or Idempotency-Key). */
  private readonly inserts = new StatementBatcher<InsertItem, Record<string, unknown> | undefined>(
    (items) => this.insertRows(items),
    ({ id, tenantId, job }) =>
      job.idempotencyKey === undefined ? id : `${tenantId}\0${job.idempotencyKey}`,
    GROUP_STATEMENTS,
    GROUP_MAX,
  );
  /** Leases taken at the same time by one worker's concurrent jobs, one UPDATE per group. */
  private readonly leases = new StatementBatcher<LeaseItem, JobRow | undefined>(
    (items) => this.leaseRows(items),
    (item) => item.jobId,
    GROUP_STATEMENTS,
    GROUP_MAX,
  );

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.jobs = dataSource.getRepository(JobEntity);
  }

  /**
   * A new job: one statement, shared with the submissions of other requests made at the same time
   * (the row comes back with it); a second one for an Idempotency-Key seen before.
   */
  async insert(job: NewJob): Promise<InsertResult> {
    const tenantId = job.tenantId ?? DEFAULT_TENANT;
    const row = await this.inserts.submit({ id: randomUUID(), tenantId, job });
    if (row) return { kind: 'created', job: this.hydrate(row) };
    const existing = await this.jobs.findOneByOrFail({
      tenantId,
      idempotencyKey: job.idempotencyKey,
    });
    return {
      kind: 'existing',
      job: existing,
      sameRequest: existing.requestHash === job.requestHash,
    };
  }

  /**
   * One INSERT for many new jobs (ids chosen by the callers, so each finds its row); a job whose
   * Idempotency-Key exists already gets no row (undefined). The tenant-limits trigger runs per row
   * and sees the rows before it; its refusal fails the statement, and StatementBatcher then runs
   * each job alone.
   */
  private async insertRows(items: InsertItem[]): Promise<(Record<string, unknown> | undefined)[]> {
    this.insertStatement ??= new PreparedStatement(
      `INSERT INTO jobs (id, status, source, algorithms, options, total_bytes, idempotency_key, request_hash, tenant_id)
       SELECT r.id, 'queued', r.source, r.algorithms, r.options, r.total_bytes, r.idempotency_key, r.request_hash, r.tenant_id
         FROM jsonb_to_recordset($1::jsonb)
              AS r(id uuid, source jsonb, algorithms text[], options jsonb, total_bytes bigint,
                   idempotency_key text, request_hash text, tenant_id text)
       ON CONFLICT (tenant_id, idempotency_key) DO NOTHING
       RETURNING ${this.jobs.metadata.columns.map((column) => column.databaseName).join(', ')}`,
    );
    const rows = await this.insertStatement.rows<Record<string, unknown>>(this.dataSource, [
      JSON.stringify(
        items.map(({ id, tenantId, job }) => ({
          id,
          source: job.source,
          algorithms: job.algorithms,
          options: job.options,
          total_bytes: job.totalBytes,
          idempotency_key: job.idempotencyKey ?? null,
          request_hash: job.requestHash ?? null,
          tenant_id: tenantId,
        })),
      ),
    ]);
    const byId = new Map(rows.map((row) => [row.id as string, row]));
    return items.map((item) => byId.get(item.id));
  }

  /** A raw jobs row as TypeORM would load it (column names to properties, transformers applied). */
  private hydrate(row: Record<string, unknown>): JobEntity {
    const job = this.jobs.create();
    for (const column of this.jobs.metadata.columns) {
      const value = this.dataSource.driver.prepareHydratedValue(row[column.databaseName], column);
      column.setEntityValue(job, value);
    }
    return job;
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
      .limit(query.limit)
      .where('job.tenant_id = :tenantId', { tenantId: query.tenantId });
    if (query.status) builder.andWhere('job.status = :status', { status: query.status });
    if (query.after) {
      builder.andWhere(
        // the cursor's job must be the tenant's too: another tenant's id places nothing
        '(job.created_at, job.id) < (SELECT cursor.created_at, cursor.id FROM jobs cursor WHERE cursor.id = :after AND cursor.tenant_id = :tenantId)',
        { after: query.after },
      );
    }
    return builder.getMany();
  }

  /** Cancels the job if it belongs to `tenantId`; another tenant's is 'not-found'. */
  async requestCancel(id: string, tenantId: string): Promise<CancelResult> {
    // queued → canceled in one conditional UPDATE, so a worker leasing the job at the same moment
    // either sees 'canceled' or already holds it as 'running' (and then sees cancel_requested).
    // A queued job may have states (released by a worker): the trigger deletes them with the UPDATE.
    const canceled = await this.jobs
      .createQueryBuilder()
      .update(JobEntity)
      .set({ status: JobStatus.Canceled, cancelRequested: true, finishedAt: () => 'now()' })
      .where('id = :id AND tenant_id = :tenantId AND status = :queued', {
        id,
        tenantId,
        queued: JobStatus.Queued,
      })
      .execute();
    if (!canceled.affected) {
      await this.jobs
        .createQueryBuilder()
        .update(JobEntity)
        .set({ cancelRequested: true })
        .where('id = :id AND tenant_id = :tenantId AND status = :running', {
          id,
          tenantId,
          running: JobStatus.Running,
        })
        .execute();
    }
    const job = await this.findById(id);
    if (!job || job.tenantId !== tenantId) return { kind: 'not-found' };
    if (job.status === JobStatus.Canceled) return { kind: 'canceled', job };
    if (job.status === JobStatus.Running) return { kind: 'requested', job };
    return { kind: 'already-finished', job };
  }

  /**
   * The worker takes the job for `leaseSeconds` (fence + 1, attempts + 1); null when it is no longer
   * queued or running, or when it has already taken `maxAttempts` leases (then see
   * failExhaustedOnLease). The writes under the lease are CheckpointStore's (apps/worker).
   */
  async lease(
    jobId: string,
    owner: string,
    leaseSeconds: number,
    maxAttempts = Number.MAX_SAFE_INTEGER,
  ): Promise<LeasedJob | null> {
    const row = await this.leases.submit({ jobId, owner, leaseSeconds, maxAttempts });
    return row ? workerJob(row) : null;
  }

  /** The jobs among `ids` that are queued and not held, in no particular order; no lease taken. */
  async queuedOfGroup(ids: readonly string[]): Promise<LeasedJob[]> {
    const rows = await QUEUED_OF_GROUP.rows<JobRow>(this.dataSource, [ids]);
    return rows.map(workerJob);
  }

  /** One UPDATE for the leases a worker takes at the same time; a job not leased gets no row. */
  private async leaseRows(items: LeaseItem[]): Promise<(JobRow | undefined)[]> {
    const rows = await LEASE.rows<JobRow>(this.dataSource, [
      items.map((item) => item.jobId),
      items.map((item) => item.owner),
      items.map((item) => item.leaseSeconds),
      items.map((item) => Math.min(item.maxAttempts, Number.MAX_SAFE_INTEGER)),
    ]);
    const byId = new Map(rows.map((row) => [row.id, row]));
    return items.map((item) => byId.get(item.jobId));
  }

  /**
   * The worker's crash-loop cap, when lease() refused the job: a job still queued or running that has taken `maxAttempts` leases ends
   * 'failed' with ATTEMPTS_EXHAUSTED (fence + 1, the checkpoint offset kept, the states deleted) instead of running
   * again. Returns what was recorded, or null when the job is finished or still has attempts left.
   */
  async failExhaustedOnLease(
    jobId: string,
    maxAttempts: number,
  ): Promise<{ attempts: number; checkpointOffset: number } | null> {
    const result: unknown = await this.dataSource.query(
      `UPDATE jobs SET ${attemptsExhaustedAssignments('$2')}
        WHERE id = $1 AND status IN ('queued', 'running') AND attempts >= $2
        RETURNING attempts, checkpoint_offset`,
      [jobId, maxAttempts],
    );
    const [row] = rawRows<{ attempts: number; checkpoint_offset: string }>(result);
    return row ? { attempts: row.attempts, checkpointOffset: Number(row.checkpoint_offset) } : null;
  }

  /** Number of jobs in every status (zero included). */
  async countByStatus(): Promise<Record<JobStatus, number>> {
    const rows: { status: JobStatus; count: string }[] = await this.dataSource.query(
      `SELECT status, count(*) AS count FROM jobs GROUP BY status`,
    );
    const counts = Object.fromEntries(JOB_STATUSES.map((status) => [status, 0])) as Record<
      JobStatus,
      number
    >;
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
   * priority, its size when known, and the leases it has taken.
   */
  async findDispatchable(id: string): Promise<{
    id: string;
    priority?: number;
    totalBytes: number | null;
    attempts: number;
  } | null> {
    const rows: {
      id: string;
      options: JobOptions | null;
      total_bytes: string | null;
      attempts: number;
    }[] = await this.dataSource.query(
      `SELECT id, options, total_bytes, attempts FROM jobs WHERE id = $1 AND ${DISPATCHABLE}`,
      [id],
    );
    if (rows.length === 0) return null;
    const [row] = rows;
    const totalBytes = row.total_bytes === null ? null : Number(row.total_bytes);
    return { id: row.id, priority: row.options?.priority, totalBytes, attempts: row.attempts };
  }

  /**
   * Ends a dispatchable job that has used `maxAttempts` leases: 'failed' with ATTEMPTS_EXHAUSTED,
   * its checkpoint offset kept, its states deleted (by the trigger of a job that ends). False when
   * it is no longer dispatchable or still has attempts left.
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
}
