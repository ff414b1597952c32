export interface JobSlotLimits {
  /** Jobs at once while they are small (WORKER_SMALL_JOB_CONCURRENCY). */
  small: number;
  /** Jobs at once of any other size (WORKER_CONCURRENCY). */
  large: number;
  /** Largest size (known at submission) of a small job: one read (CHUNK_BYTES). */
  smallJobBytes: number;
}

/**
 * How many jobs one worker runs at once, by size. A small job holds a few KiB and mostly waits on
 * round trips (two statements, one Redis call, a few file system calls): up to `small` of them
 * run together so their waits overlap. Any other job may hold chunk buffers and a core for a long
 * time: at most `large` at once, as before. BullMQ fetches jobs before anyone knows their size,
 * so while the large slots are all taken the worker fetches only up to `large` jobs in all
 * (`setFetchLimit`, BullMQ's concurrency), and a large job fetched just before is handed back to
 * the queue, where another worker may take it.
 */
export class JobSlots {
  private largeRunning = 0;

  constructor(
    private readonly limits: JobSlotLimits,
    private readonly setFetchLimit: (jobs: number) => void,
  ) {}

  /** BullMQ's concurrency while a large slot is free. */
  static fetchLimit(limits: Pick<JobSlotLimits, 'small' | 'large'>): number {
    return Math.max(limits.small, limits.large);
  }

  /**
   * A slot for a job of `totalBytes` (undefined: unknown, so large): the function that frees it,
   * or null when every large slot is taken (hand the job back).
   */
  take(totalBytes: number | undefined): (() => void) | null {
    if (totalBytes !== undefined && totalBytes <= this.limits.smallJobBytes) return () => undefined;
    if (this.largeRunning >= this.limits.large) return null;
    this.largeRunning++;
    if (this.largeRunning === this.limits.large) this.setFetchLimit(this.limits.large);
    let freed = false;
    return () => {
      if (freed) return;
      freed = true;
      if (this.largeRunning-- === this.limits.large)
        this.setFetchLimit(JobSlots.fetchLimit(this.limits));
    };
  }
}
