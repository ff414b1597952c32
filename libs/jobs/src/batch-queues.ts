import type { JobsOptions } from 'bullmq';

/** The BullMQ queue of batch listings: one job per batch, its id the batch id. */
export const BATCH_LIST_QUEUE = 'batch-list';
/** The BullMQ queue of batch hashing groups: one job per group of small items. */
export const BATCH_GROUP_QUEUE = 'batch-group';

/** Payload of a listing job: everything else (cursor, fence) is read from PostgreSQL. */
export interface BatchListJobData {
  batchId: string;
}

/** Payload of a group job: the batch and the group (its listing page) of pending small items. */
export interface BatchGroupJobData {
  batchId: string;
  group: number;
}

const RETRIES: Pick<JobsOptions, 'attempts' | 'backoff' | 'removeOnComplete' | 'removeOnFail'> = {
  attempts: 8,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { count: 1000 },
  removeOnFail: { count: 5000 },
};

/** The listing job of a batch; adding it twice is harmless (the BullMQ id is the batch id). */
export function batchListJobOptions(batchId: string, priority?: number): JobsOptions {
  return { jobId: batchId, priority, ...RETRIES };
}

/**
 * The BullMQ id of a group: a retry of the batch starts a new dispatch round, so its groups get
 * new ids instead of colliding with the completed jobs of the first run.
 */
export function batchGroupJobId(batchId: string, round: number, group: number): string {
  return `${batchId}-r${round}-g${group}`;
}

export function batchGroupJobOptions(
  batchId: string,
  round: number,
  group: number,
  priority?: number,
): JobsOptions {
  return { jobId: batchGroupJobId(batchId, round, group), priority, ...RETRIES };
}
