import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { Queue } from 'bullmq';
import type { Logger } from 'pino';

import { HASHQ_CONFIG, HASHQ_LOGGER, type HashqConfig } from '@hashq/config';
import { HASH_QUEUE, type HashJobData, JobQueueReconciler, JobsRepository } from '@hashq/jobs';

/**
 * The API's queue reconciler: @hashq/jobs' JobQueueReconciler (shared with the worker) at start
 * and every RECONCILE_SECONDS, so jobs accepted while Redis was away, or lost by Redis, are
 * enqueued once it is back. See JobQueueReconciler for what is re-enqueued and why it is safe.
 */
@Injectable()
export class QueueReconciler extends JobQueueReconciler implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(
    jobs: JobsRepository,
    @InjectQueue(HASH_QUEUE) queue: Queue<HashJobData>,
    @Inject(HASHQ_LOGGER) logger: Logger,
    @Inject(HASHQ_CONFIG) config: HashqConfig,
  ) {
    super(jobs, queue, logger, { intervalMs: config.reconcileSeconds * 1000, maxAttempts: config.maxJobAttempts });
  }
}
