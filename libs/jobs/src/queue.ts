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

/**
 * Name of a BullMQ job on the hash queue that carries several small file jobs (a "job group"):
 * the API dispatches the small file jobs of concurrent submissions together, and the worker
 * leases, hashes (natively, one pool task per root) and finishes them with one statement each,
 * so a small job costs a few rows, not a queue job of its own (README, "Small jobs").
 */
export const HASH_GROUP_JOB = 'hash-group';

/** Payload of a job group: its jobs' ids (their rows say the rest). */
export interface HashGroupJobData {
  jobIds: string[];
}

/** Jobs in one group at most. */
export const MAX_GROUP_JOBS = 256;

/**
 * Whether a job may be dispatched in a group: a local file whose size at submission is below
 * `smallBytes` (BATCH_SMALL_ITEM_BYTES), without options only the single-job path implements, and
 * not held for a slot of its tenant (JobAdmission dispatches those one by one).
 */
export function isGroupable(
  job: {
    source: { type: string };
    totalBytes: number | null;
    options: { customization?: string; s3Checksum?: boolean } | null;
    admission?: string | null;
  },
  smallBytes: number,
): boolean {
  return (
    job.source.type === 'file' &&
    job.totalBytes !== null &&
    job.totalBytes < smallBytes &&
    !job.options?.customization &&
    !job.options?.s3Checksum &&
    job.admission !== 'held'
  );
}

/**
 * BullMQ options of a job group: a job's, under an id of its own (its first job's id with a
 * prefix, so dispatching the same group twice adds it once).
 */
export function hashGroupJobOptions(jobIds: readonly string[], priority?: number): JobsOptions {
  return hashJobOptions(`group-${jobIds[0]}`, priority);
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
