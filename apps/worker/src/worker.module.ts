import { Module, type DynamicModule } from '@nestjs/common';
import { BullModule, getQueueToken } from '@nestjs/bullmq';
import { getDataSourceToken } from '@nestjs/typeorm';
import { HASHQ_CONFIG, HASHQ_LOGGER, HashqConfigModule, type HashqConfig } from '@hashq/config';
import { DatabaseModule, isConnectionError, pgErrorSummary } from '@hashq/database';
import { HASH_QUEUE, JobQueueReconciler, JobStoreModule, JobsRepository, type HashJobData } from '@hashq/jobs';
import { FileRoots, remoteConfig, SourceFactory } from '@hashq/sources';
import type { Logger } from 'pino';
import type { Queue } from 'bullmq';
import type { DataSource } from 'typeorm';
import { BenchmarkModule } from './benchmark/benchmark.module.js';
import { CheckpointStore } from './checkpoint-store.js';
import { HashProcessor } from './hash.processor.js';
import { WorkerMetrics } from './worker-metrics.js';

/** ioredis options from REDIS_URL; BullMQ workers need maxRetriesPerRequest: null (blocking commands). */
export function redisConnection(redisUrl: string) {
  const url = new URL(redisUrl);
  return {
    host: url.hostname,
    port: Number(url.port || 6379),
    username: url.username ? decodeURIComponent(url.username) : undefined,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    db: url.pathname.length > 1 ? Number(url.pathname.slice(1)) : 0,
    tls: url.protocol === 'rediss:' ? {} : undefined,
    maxRetriesPerRequest: null,
  };
}

@Module({})
export class WorkerModule {
  static register(logger: Logger): DynamicModule {
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
        {
          provide: CheckpointStore,
          inject: [getDataSourceToken(), HASHQ_CONFIG, HASHQ_LOGGER],
          useFactory: (dataSource: DataSource, config: HashqConfig, log: Logger) => {
            return new CheckpointStore(dataSource, config.databaseSchema, config.leaseSeconds, {
              // PostgreSQL away: heartbeats and checkpoints retry (the position stays in memory)
              maxMs: config.worker.pgOutageMaxMs,
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
            new SourceFactory(new FileRoots(config.fileRoots), remoteConfig(config)),
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
