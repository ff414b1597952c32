import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { resolve } from 'node:path';

import { HASHQ_CONFIG, HASHQ_LOGGER, type HashqConfig, loadConfig } from '@hashq/config';
import {
  HASH_GROUP_JOB,
  HASH_QUEUE,
  type HashGroupJobData,
  type HashJobData,
  hashJobData,
  hashJobOptions,
  JobsRepository,
  type LeasedJob,
  TenantsRepository,
} from '@hashq/jobs';
import { isWithin, SourceFactory } from '@hashq/sources';
import { InjectQueue, OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { type BeforeApplicationShutdown, Inject } from '@nestjs/common';
import { type Job, type Queue, UnrecoverableError } from 'bullmq';
import type { Logger } from 'pino';

import { CheckpointStore } from './checkpoint-store';
import { HashRun, type RunOutcome } from './hash-run';
import { classifyError, LeaseLostError } from './job-errors';
import { type GroupCounts, runJobGroup } from './job-group-run';
import { JobSlots } from './job-slots';
import { moveBackToWait } from './move-back-to-wait';
import { WorkerMetrics } from './worker-metrics';

/** BullMQ options are fixed when the class is decorated, so loadConfig runs when this module loads. */
function workerOptions() {
  const { workerConcurrency, workerSmallJobConcurrency, worker: settings } = loadConfig();
  return {
    concurrency: JobSlots.fetchLimit({
      small: workerSmallJobConcurrency,
      large: workerConcurrency,
    }),
    lockDuration: settings.lockDurationMs,
    stalledInterval: settings.stalledIntervalMs,
    maxStalledCount: settings.maxStalledCount,
  };
}

/**
 * Consumes the "hash" queue. BullMQ only dispatches: the job's truth (status,
 * fence, checkpoint) is in PostgreSQL and every write is fenced, so a job that
 * BullMQ delivers twice (a stalled worker coming back) is never hashed into a
 * wrong result.
 */
@Processor(HASH_QUEUE, workerOptions())
export class HashProcessor extends WorkerHost implements BeforeApplicationShutdown {
  private readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private draining = false;
  private readonly slots: JobSlots;

  constructor(
    private readonly jobs: JobsRepository,
    private readonly store: CheckpointStore,
    private readonly sources: SourceFactory,
    private readonly tenants: TenantsRepository,
    @Inject(HASHQ_CONFIG) private readonly config: HashqConfig,
    @Inject(HASHQ_LOGGER) private readonly log: Logger,
    private readonly metrics: WorkerMetrics,
    @InjectQueue(HASH_QUEUE) private readonly queue: Queue<HashJobData>,
  ) {
    super();
    const limits = {
      small: config.workerSmallJobConcurrency,
      large: config.workerConcurrency,
      smallJobBytes: config.chunkBytes,
    };
    this.slots = new JobSlots(limits, (jobs) => (this.worker.concurrency = jobs));
  }

  async process(
    job: Job<HashJobData | HashGroupJobData>,
    token?: string,
  ): Promise<{ status: RunOutcome | 'skipped' } | GroupCounts> {
    if (this.draining) return moveBackToWait(job, token);
    if (job.name === HASH_GROUP_JOB) return this.runGroup((job.data as HashGroupJobData).jobIds);
    const single = job as Job<HashJobData>;
    const free = this.slots.take(single.data.totalBytes);
    if (!free) {
      this.log.debug({ bullJobId: job.id }, 'every large-job slot is taken: job handed back');
      return moveBackToWait(job, token);
    }
    try {
      return await this.run(single, token);
    } finally {
      free();
    }
  }

  /** A job group (small files, a small slot): see runJobGroup. */
  private runGroup(jobIds: string[]): Promise<GroupCounts> {
    return runJobGroup(jobIds, {
      jobs: this.jobs,
      store: this.store,
      tenants: this.tenants,
      config: this.config,
      log: this.log,
      metrics: this.metrics,
      dispatchAlone: async (queued) => {
        await this.queue.add(
          'hash',
          hashJobData(queued.id, null),
          hashJobOptions(queued.id, queued.options.priority),
        );
      },
    });
  }

  /** Lease, hash, record: one attempt at the job. */
  private async run(
    job: Job<HashJobData>,
    token: string | undefined,
  ): Promise<{ status: RunOutcome | 'skipped' }> {
    const jobId = job.data.jobId ?? job.id;
    const maxAttempts = this.config.maxJobAttempts;
    const leased = await this.jobs.lease(jobId, this.owner, this.config.leaseSeconds, maxAttempts);
    if (!leased) {
      // A crash loop (MAX_JOB_ATTEMPTS leases used): the job ends failed instead of running again.
      const exhausted = await this.jobs.failExhaustedOnLease(jobId, maxAttempts);
      if (exhausted) {
        this.log.error(
          { jobId, bullJobId: job.id, maxAttempts, ...exhausted },
          'job failed: ATTEMPTS_EXHAUSTED',
        );
        return { status: 'failed' };
      }
      this.log.info(
        { jobId, bullJobId: job.id },
        'job is no longer queued or running: nothing to do',
      );
      return { status: 'skipped' };
    }
    const log = this.log.child({ jobId, fence: leased.fence, attempt: job.attemptsMade + 1 });
    const run = new HashRun(
      leased,
      this.store,
      await this.sourcesOf(leased.tenantId),
      this.runSettings(),
      log,
      () => this.draining,
      this.metrics,
    );
    let outcome: RunOutcome;
    try {
      outcome = await run.execute();
    } catch (err) {
      throw await this.settleError(err, job, leased, run, log);
    }
    if (outcome === 'handed-back') return moveBackToWait(job, token);
    return { status: outcome };
  }

  /**
   * SIGTERM/SIGINT: the running jobs checkpoint and are handed back at their next chunk;
   * closing the worker first makes sure it fetches nothing new meanwhile.
   */
  async beforeApplicationShutdown(signal?: string): Promise<void> {
    this.draining = true;
    this.log.info({ signal }, 'stopping: handing back running jobs');
    await this.worker.close();
  }

  @OnWorkerEvent('stalled')
  onStalled(jobId: string): void {
    this.log.warn(
      { jobId },
      'job stalled (its worker died or blocked): it will run again from its checkpoint',
    );
  }

  @OnWorkerEvent('error')
  onError(err: Error): void {
    this.log.error({ err: err.message }, 'worker error');
  }

  /** Records the failure in PostgreSQL and tells BullMQ whether to retry. */
  private async settleError(
    err: unknown,
    job: Job,
    leased: LeasedJob,
    run: HashRun,
    log: Logger,
  ): Promise<Error> {
    if (err instanceof LeaseLostError) {
      log.warn('lease lost: another worker owns this job now; stopping without writing');
      return new UnrecoverableError(err.code);
    }
    const error = classifyError(err);
    const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    try {
      if (error.permanent || lastAttempt) {
        await this.store.fail(leased, error, run.totalBytesRead);
        log.error({ code: error.code, error: error.message }, 'job failed');
        return new UnrecoverableError(`${error.code}: ${error.message}`);
      }
      await this.store.requeue(leased, error, run.totalBytesRead);
      log.warn(
        { code: error.code, error: error.message },
        'transient error: will retry with backoff',
      );
      return err instanceof Error ? err : new Error(String(err));
    } catch (storeErr) {
      log.error(
        { code: error.code, error: error.message, storeError: (storeErr as Error).message },
        'could not record the error',
      );
      return storeErr instanceof LeaseLostError
        ? new UnrecoverableError(storeErr.code)
        : (storeErr as Error);
    }
  }

  /**
   * The tenant's sources: files opened beneath its file_roots (those inside HASHQ_FILE_ROOTS), so a
   * path checked at submission cannot be swapped for one outside them before the worker opens it;
   * HTTP(S) limited to its allowed_hosts at every hop, redirects included.
   */
  private async sourcesOf(tenantId: string): Promise<SourceFactory> {
    const tenant = await this.tenants.settings(tenantId);
    let sources = this.sources;
    if (tenant?.fileRoots) {
      const deployment = this.config.fileRoots.map((root) => resolve(root));
      sources = sources.withFileRoots(
        tenant.fileRoots.filter((root) => deployment.some((base) => isWithin(base, resolve(root)))),
      );
    }
    return tenant?.allowedHosts ? sources.withAllowedHosts(tenant.allowedHosts) : sources;
  }

  private runSettings() {
    return {
      chunkBytes: this.config.chunkBytes,
      checkpointBytes: this.config.checkpointBytes,
      checkpointSeconds: this.config.checkpointSeconds,
      limits: {
        maxBytes: this.config.sourceMaxBytes,
        minBytesPerInterval: this.config.sourceMinBytesPerInterval,
        progressIntervalMs: this.config.sourceProgressIntervalMs,
      },
    };
  }
}
