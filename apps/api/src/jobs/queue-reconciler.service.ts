import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { Queue } from 'bullmq';
import type { Logger } from 'pino';

import { HASHQ_LOGGER } from '@hashq/config';
import { HASH_QUEUE, type HashJobData, JobsRepository, hashJobOptions } from '@hashq/jobs';

import { withTimeout } from '../common/with-timeout';

export const RECONCILE_INTERVAL_MS = 30_000;
/** A Redis call that takes longer ends this round (Redis is away); the next round retries. */
const REDIS_TIMEOUT_MS = 2000;

/**
 * PostgreSQL is the truth, Redis only dispatches: every job PostgreSQL calls queued or running must
 * have its BullMQ job. This puts back the ones Redis lost (flushed, failed over, or an enqueue that
 * never arrived), at start and every 30 s. Re-adding is safe: the BullMQ id is the job id, and a
 * worker leasing a job that another worker still holds bumps the fence, so only one can write.
 */
@Injectable()
export class QueueReconciler implements OnApplicationBootstrap, OnModuleDestroy {
  private timer?: NodeJS.Timeout;
  private running?: Promise<number>;

  constructor(
    private readonly jobs: JobsRepository,
    @InjectQueue(HASH_QUEUE) private readonly queue: Queue<HashJobData>,
    @Inject(HASHQ_LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    void this.reconcileQuietly();
    this.timer = setInterval(() => void this.reconcileQuietly(), RECONCILE_INTERVAL_MS);
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** Re-enqueues unfinished jobs that have no BullMQ job; returns how many. */
  async reconcile(): Promise<number> {
    let restored = 0;
    for (const id of await this.jobs.unfinishedIds()) {
      if (await this.redis(this.queue.getJob(id))) continue;
      const job = await this.jobs.findById(id);
      if (!job || (job.status !== 'queued' && job.status !== 'running')) continue;
      await this.redis(this.queue.add('hash', { jobId: id }, hashJobOptions(id, job.options.priority)));
      restored++;
    }
    if (restored > 0) this.logger.warn({ restored }, 're-enqueued jobs missing from Redis');
    return restored;
  }

  private redis<T>(call: Promise<T>): Promise<T> {
    call.catch(() => undefined); // it may settle after the timeout
    return withTimeout(call, REDIS_TIMEOUT_MS, 'redis');
  }

  private async reconcileQuietly(): Promise<void> {
    if (this.running) return;
    this.running = this.reconcile();
    try {
      await this.running;
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'queue reconciliation failed; retrying later');
    } finally {
      this.running = undefined;
    }
  }
}
