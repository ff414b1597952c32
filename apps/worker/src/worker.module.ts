import { HASHQ_CONFIG, HASHQ_LOGGER, type HashqConfig, HashqConfigModule } from '@hashq/config';
import { StateSealer } from '@hashq/crypto';
import { DatabaseModule, isConnectionError, pgErrorSummary } from '@hashq/database';
import {
  bullRootModule,
  JobStoreModule,
  QueueReconcilerModule,
  TenantStoreModule,
} from '@hashq/jobs';
import { FileRoots, remoteConfig, SourceFactory } from '@hashq/sources';
import { type DynamicModule, Module } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';

import { BenchmarkModule } from './benchmark/benchmark.module';
import { CheckpointStore } from './checkpoint-store';
import { HashProcessor } from './hash.processor';
import { TenantSlots } from './tenant-slots';
import { WorkerMetrics } from './worker-metrics';

@Module({})
export class WorkerModule {
  static register(logger: Logger): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        HashqConfigModule.forRoot({ name: 'worker', logger }),
        DatabaseModule,
        bullRootModule('consumer'),
        JobStoreModule,
        QueueReconcilerModule,
        TenantStoreModule,
        BenchmarkModule,
      ],
      providers: [
        {
          provide: CheckpointStore,
          inject: [getDataSourceToken(), HASHQ_CONFIG, HASHQ_LOGGER],
          useFactory: (dataSource: DataSource, config: HashqConfig, log: Logger) => {
            const sealer = new StateSealer(config.stateKeys);
            return new CheckpointStore(
              dataSource,
              config.databaseSchema,
              sealer,
              config.leaseSeconds,
              {
                // PostgreSQL away: heartbeats and checkpoints retry (the position stays in memory)
                maxMs: config.worker.pgOutageMaxMs,
                initialDelayMs: 200,
                maxDelayMs: 5000,
                isTransient: isConnectionError,
                onRetry: (error, attempt, delayMs, elapsedMs, job) =>
                  log.warn(
                    {
                      jobId: job.id,
                      fence: job.fence,
                      attempt,
                      delayMs,
                      elapsedMs,
                      err: pgErrorSummary(error),
                    },
                    'database unavailable: retrying the write',
                  ),
                onRecovered: (attempts, elapsedMs, job) =>
                  log.info(
                    { jobId: job.id, fence: job.fence, attempts, elapsedMs },
                    'database back: write committed',
                  ),
              },
            );
          },
        },
        {
          provide: SourceFactory,
          inject: [HASHQ_CONFIG],
          useFactory: (config: HashqConfig) =>
            new SourceFactory(new FileRoots(config.fileRoots), remoteConfig(config)),
        },
        WorkerMetrics,
        HashProcessor,
        TenantSlots,
      ],
    };
  }
}
