import { BatchQueuesModule, BatchReconcilerModule } from '@hashq/batches/batch-dispatch';
import { HashQueueModule, JobStoreModule } from '@hashq/jobs';
import { Module } from '@nestjs/common';

import { AlgorithmsModule } from '../algorithms/algorithms.module';
import { JobRequestValidator } from '../jobs/job-request.validator';
import { BatchReport } from './batch-report';
import { BatchSourceResolver } from './batch-source.resolver';
import { BatchesController } from './batches.controller';
import { BatchesService } from './batches.service';

@Module({
  imports: [
    BatchQueuesModule,
    BatchReconcilerModule,
    JobStoreModule,
    HashQueueModule,
    AlgorithmsModule,
  ],
  controllers: [BatchesController],
  providers: [BatchesService, BatchSourceResolver, BatchReport, JobRequestValidator],
})
export class BatchesModule {}
