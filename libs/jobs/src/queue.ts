import { type JobsOptions, PRIORITY_LIMIT } from 'bullmq';

/** The BullMQ queue that dispatches hash jobs (its keys live under QUEUE_PREFIX). */
export const HASH_QUEUE = 'hash';

/**
 * Payload of a BullMQ hash job: the id, and the size known at submission as a scheduling hint
 * (a worker runs many small jobs at once); everything else is read from PostgreSQL.
 */
export interface HashJobData {
  jobId: string;
  totalBytes?: number;
  /** Set on a job admitted under its tenant's max_running_jobs: its end admits the tenant's next. */
  tenantId?: string;
}

export function hashJobData(jobId: string, totalBytes: number | null): HashJobData {
  return totalBytes === null ? { jobId } : { jobId, totalBytes };
}

/** Bounds of the `priority` field: BullMQ's own range (2^21 - 1 at most), 1 runs first; absent means "no priority". */
export const MIN_PRIORITY = 1;
export const MAX_PRIORITY = PRIORITY_LIMIT;

/**
 * The error code of a job BullMQ will not take (its options break BullMQ's rules): the queue
 * reconciler ends it 'failed' instead of retrying it every round.
 */
export const ENQUEUE_REFUSED = 'ENQUEUE_REFUSED';

/**
 * BullMQ options of a hash job. The BullMQ id is the job id, so enqueueing twice is harmless.
 * Transient errors retry with exponential backoff (1 s, 2 s, 4 s, …); the worker throws
 * UnrecoverableError for permanent ones, which skips the remaining attempts.
 */
export function hashJobOptions(jobId: string, priority?: number): JobsOptions {
  return {
    jobId,
    priority,
    attempts: 8,
    backoff: { type: 'exponential', delay: 1000 },
    removeOnComplete: { count: 1000 },
    removeOnFail: { count: 5000 },
  };
}
