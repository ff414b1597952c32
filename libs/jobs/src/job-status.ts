import type { JobStatusValue } from '@hashq/database';

/** The life of a job: queued → running → succeeded | failed | canceled. */
export const JobStatus = {
  Queued: 'queued',
  Running: 'running',
  Succeeded: 'succeeded',
  Failed: 'failed',
  Canceled: 'canceled',
} as const satisfies Record<string, JobStatusValue>;

export type JobStatus = JobStatusValue;

export const JOB_STATUSES: readonly JobStatus[] = Object.values(JobStatus);
