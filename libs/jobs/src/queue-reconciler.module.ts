import { HASHQ_CONFIG, HASHQ_LOGGER, type HashqConfig } from '@hashq/config';
import { getQueueToken } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';
import type { Queue } from 'bullmq';
import type { Logger } from 'pino';

import { HashQueueModule } from './hash-queue.module';
import { JobStoreModule } from './job-store.module';
import { JobsRepository } from './jobs.repository';
import { HASH_QUEUE, type HashGroupJobData, type HashJobData } from './queue';
import { JobQueueReconciler } from './queue-reconciler';

/**
 * The queue reconciler of an app (the API and every worker run one): a round at start and every
 * RECONCILE_SECONDS puts back the jobs Redis lost, or that were accepted while it was away.
 * Needs HashqConfigModule, DatabaseModule and BullModule.forRoot in the app.
 */
@Module({
  imports: [JobStoreModule, HashQueueModule],
  providers: [
    {
      provide: JobQueueReconciler,
      inject: [JobsRepository, getQueueToken(HASH_QUEUE), HASHQ_LOGGER, HASHQ_CONFIG],
      useFactory: (
        jobs: JobsRepository,
        queue: Queue<HashJobData | HashGroupJobData>,
        log: Logger,
        config: HashqConfig,
      ) =>
        new JobQueueReconciler(jobs, queue, log.child({ component: 'reconciler' }), {
          intervalMs: config.reconcileSeconds * 1000,
          maxAttempts: config.maxJobAttempts,
        }),
    },
  ],
  exports: [JobQueueReconciler],
})
export class QueueReconcilerModule {}
