import { BatchQueuesModule, BatchReconcilerModule } from '@hashq/batches/batch-dispatch';
import { HashQueueModule, JobStoreModule, TenantStoreModule } from '@hashq/jobs';
import { Module } from '@nestjs/common';

import { AlgorithmsModule } from '../algorithms/algorithms.module';
import { JobRequestValidator } from '../jobs/job-request.validator';
import { TenantPolicy } from '../jobs/tenant-policy';
import { BatchReport } from './batch-report';
import { BatchSourceResolver } from './batch-source.resolver';
import { BatchTenantPolicy } from './batch-tenant-policy';
import { BatchesController } from './batches.controller';
import { BatchesService } from './batches.service';

@Module({
  imports: [
    BatchQueuesModule,
    BatchReconcilerModule,
    JobStoreModule,
    HashQueueModule,
    AlgorithmsModule,
    TenantStoreModule,
  ],
  controllers: [BatchesController],
  providers: [
    BatchesService,
    BatchSourceResolver,
    BatchReport,
    JobRequestValidator,
    TenantPolicy,
    BatchTenantPolicy,
  ],
  exports: [BatchesService],
})
export class BatchesModule {}
