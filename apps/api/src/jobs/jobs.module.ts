import {
  HashQueueModule,
  JobStoreModule,
  QueueReconcilerModule,
  TenantStoreModule,
} from '@hashq/jobs';
import { Module } from '@nestjs/common';

import { AlgorithmsModule } from '../algorithms/algorithms.module';
import { JobRequestValidator } from './job-request.validator';
import { JobSourceResolver } from './job-source.resolver';
import { JobsController } from './jobs.controller';
import { JobsService } from './jobs.service';
import { TenantPolicy } from './tenant-policy';

@Module({
  imports: [
    JobStoreModule,
    AlgorithmsModule,
    HashQueueModule,
    QueueReconcilerModule,
    TenantStoreModule,
  ],
  controllers: [JobsController],
  providers: [JobsService, JobRequestValidator, JobSourceResolver, TenantPolicy],
  exports: [JobsService],
})
export class JobsModule {}
