import { Module, type DynamicModule } from '@nestjs/common';
import { BullModule, getQueueToken } from '@nestjs/bullmq';
import { getDataSourceToken } from '@nestjs/typeorm';
import { HASHQ_CONFIG, HASHQ_LOGGER, HashqConfigModule, type HashqConfig } from '@hashq/config';
import { StateSealer } from '@hashq/crypto';
import { DatabaseModule, isConnectionError, pgErrorSummary } from '@hashq/database';
import { HASH_QUEUE, JobQueueReconciler, JobStoreModule, JobsRepository, type HashJobData } from '@hashq/jobs';
import { FileRoots, loadRemoteConfig, SourceFactory } from '@hashq/sources';
import type { Logger } from 'pino';
import type { Queue } from 'bullmq';
import type { DataSource } from 'typeorm';
import { BenchmarkModule } from './benchmark/benchmark.module.js';
import { CheckpointStore } from './checkpoint-store.js';
import { redisConnection } from './redis-connection.js';
import { HashProcessor } from './hash.processor.js';
import { WORKER_SETTINGS, type WorkerSettings } from './worker-config.js';
import { WorkerMetrics } from './worker-metrics.js';

@Module({})
export class WorkerModule {
  static register(settings: WorkerSettings, logger: Logger): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        HashqConfigModule.forRoot({ name: 'worker', logger }),
        DatabaseModule,
        BullModule.forRootAsync({
          inject: [HASHQ_CONFIG],
          useFactory: (config: HashqConfig) => ({
            connection: redisConnection(config.redisUrl),
            prefix: config.queuePrefix,
          }),
        }),
        BullModule.registerQueue({ name: HASH_QUEUE }),
        JobStoreModule,
        BenchmarkModule,
      ],
      providers: [
        { provide: WORKER_SETTINGS, useValue: settings },
        {
          provide: CheckpointStore,
          inject: [getDataSourceToken(), HASHQ_CONFIG, HASHQ_LOGGER],
          useFactory: (dataSource: DataSource, config: HashqConfig, log: Logger) => {
            const sealer = new StateSealer(config.stateKeys);
            return new CheckpointStore(dataSource, config.databaseSchema, sealer, config.leaseSeconds, {
              // PostgreSQL away: heartbeats and checkpoints retry (the position stays in memory)
              maxMs: settings.pgOutageMaxMs,
              initialDelayMs: 200,
              maxDelayMs: 5000,
              isTransient: isConnectionError,
              onRetry: (error, attempt, delayMs, elapsedMs, job) =>
                log.warn(
                  { jobId: job.id, fence: job.fence, attempt, delayMs, elapsedMs, err: pgErrorSummary(error) },
                  'database unavailable: retrying the write',
                ),
              onRecovered: (attempts, elapsedMs, job) =>
                log.info({ jobId: job.id, fence: job.fence, attempts, elapsedMs }, 'database back: write committed'),
            });
          },
        },
        {
          provide: SourceFactory,
          inject: [HASHQ_CONFIG],
          useFactory: (config: HashqConfig) =>
            new SourceFactory(new FileRoots(config.fileRoots), loadRemoteConfig(process.env, config.allowHosts)),
        },
        {
          // Redis may have lost jobs that PostgreSQL still calls queued/running (e.g. a restart
          // without persistence): put them back at start and every RECONCILE_SECONDS.
          provide: JobQueueReconciler,
          inject: [JobsRepository, getQueueToken(HASH_QUEUE), HASHQ_LOGGER, HASHQ_CONFIG],
          useFactory: (jobs: JobsRepository, queue: Queue<HashJobData>, log: Logger, config: HashqConfig) =>
            new JobQueueReconciler(jobs, queue, log.child({ component: 'reconciler' }), {
              intervalMs: config.reconcileSeconds * 1000,
              maxAttempts: config.maxJobAttempts,
            }),
        },
        WorkerMetrics,
        HashProcessor,
      ],
    };
  }
}
