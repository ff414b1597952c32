import { HASHQ_LOGGER } from '@hashq/config';
import { rawRows } from '@hashq/database';
import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';

import { HASH_QUEUE, type HashJobData, hashJobData, hashJobOptions } from './queue';
import { withTimeout } from './with-timeout';

/** A job fill() admitted (total_bytes is a bigint: pg returns it as text). */
interface AdmittedRow {
  id: string;
  priority: number | null;
  total_bytes: string | null;
}

const REDIS_TIMEOUT_MS = 2000;

/**
 * Fairness between tenants (max_running_jobs; docs/tenants.md). BullMQ has no per-group
 * concurrency, so admission happens in PostgreSQL: a job of a tenant with a limit is inserted
 * 'held' (the jobs_tenant_limits trigger) and stays out of BullMQ until fill() admits it into a free
 * slot. A slot is an 'admitted' job that is queued or running, counted from PostgreSQL, so a
 * crashed worker leaks none: its job keeps the slot until it is run again and ends.
 *
 * fill() is idempotent ("admit as many as there are free slots"), so anyone may call it at any
 * time: the API after a submission or a cancel, the worker when a job of such a tenant settles, and
 * the AdmissionSweeper every RECONCILE_SECONDS (after a crash between a job's end and its fill).
 * These statements own the `admission` column of jobs; JobsRepository owns the rest of the table.
 */
@Injectable()
export class JobAdmission {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @InjectQueue(HASH_QUEUE) private readonly queue: Queue<HashJobData>,
    @Inject(HASHQ_LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * Admits the tenant's next held jobs (by priority, absent last, then oldest first: BullMQ's order)
   * into its free slots and enqueues them; returns their ids.
   * The tenant row lock serializes fills of one tenant, and the count runs after it is taken, so
   * two fills never hand out the same slot. An enqueue that fails is left to the queue reconciler
   * (an admitted queued job is dispatchable like any other).
   */
  async fill(tenantId: string): Promise<string[]> {
    const admitted = await this.dataSource.transaction(async (tx) => {
      const tenants: { max_running_jobs: number | null }[] = await tx.query(
        `SELECT max_running_jobs FROM tenants WHERE id = $1 FOR NO KEY UPDATE`,
        [tenantId],
      );
      if (tenants.length === 0) return [];
      const result: unknown = await tx.query(
        `UPDATE jobs SET admission = 'admitted', updated_at = now()
          WHERE id IN (
                  SELECT id FROM jobs
                   WHERE tenant_id = $1 AND admission = 'held' AND status = 'queued'
                   ORDER BY (options ->> 'priority')::int, created_at, id
                   LIMIT CASE WHEN $2::int IS NULL THEN NULL ELSE greatest(0, $2::int - (
                           SELECT count(*) FROM jobs WHERE tenant_id = $1 AND admission = 'admitted'
                              AND status IN ('queued', 'running'))) END)
            AND admission = 'held' AND status = 'queued'
          RETURNING id, (options ->> 'priority')::int AS priority, total_bytes`,
        [tenantId, tenants[0].max_running_jobs],
      );
      return rawRows<AdmittedRow>(result);
    });
    for (const job of admitted) await this.enqueue(tenantId, job);
    return admitted.map((job) => job.id);
  }

  /** fill() for every tenant that has held jobs; returns how many jobs were admitted. */
  async fillAll(): Promise<number> {
    const tenants: { id: string }[] = await this.dataSource.query(
      `SELECT id FROM tenants t
        WHERE EXISTS (SELECT 1 FROM jobs WHERE tenant_id = t.id AND admission = 'held' AND status = 'queued')`,
    );
    let admitted = 0;
    for (const tenant of tenants) admitted += (await this.fill(tenant.id)).length;
    return admitted;
  }

  /** The BullMQ job carries the tenant, so the worker that ends it admits the tenant's next one. */
  private async enqueue(tenantId: string, job: AdmittedRow): Promise<void> {
    const jobId = job.id;
    const size = job.total_bytes === null ? null : Number(job.total_bytes);
    try {
      const added = this.queue.add(
        'hash',
        { ...hashJobData(jobId, size), tenantId },
        hashJobOptions(jobId, job.priority ?? undefined),
      );
      await withTimeout(added, REDIS_TIMEOUT_MS, 'redis');
    } catch (err) {
      this.logger.warn(
        { jobId, tenantId, err: (err as Error).message },
        'admitted job not enqueued; the queue reconciler will',
      );
    }
  }
}
