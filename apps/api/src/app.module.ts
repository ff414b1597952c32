import { type ConfigModuleOptions, HashqConfigModule } from '@hashq/config';
import { DatabaseModule } from '@hashq/database';
import { bullRootModule } from '@hashq/jobs';
import { type DynamicModule, Module } from '@nestjs/common';

import { AlgorithmsModule } from './algorithms/algorithms.module';
import { AuthModule } from './auth/auth.module';
import { BatchesModule } from './batches/batches.module';
import { BenchmarksModule } from './benchmarks/benchmarks.module';
import { DigestSessionsModule } from './digest-sessions/digest-sessions.module';
import { HealthModule } from './health/health.module';
import { JobsModule } from './jobs/jobs.module';
import { MetricsModule } from './metrics/metrics.module';
import { ThrottleModule } from './throttle/throttle.module';
import { WebhooksModule } from './webhooks/webhooks.module';

/** The REST API: configuration, PostgreSQL, the BullMQ producer, and one module per feature. */
@Module({})
export class AppModule {
  static forRoot(options: ConfigModuleOptions = {}): DynamicModule {
    return {
      module: AppModule,
      imports: [
        HashqConfigModule.forRoot({ name: 'api', ...options }),
        DatabaseModule,
        bullRootModule('producer'),
        AuthModule,
        JobsModule,
        AlgorithmsModule,
        BenchmarksModule,
        HealthModule,
        MetricsModule,
        DigestSessionsModule,
        ThrottleModule,
        BatchesModule,
        WebhooksModule,
      ],
    };
  }
}
