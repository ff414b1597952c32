import { HashQueueModule, JobStoreModule, QueueReconcilerModule } from '@hashq/jobs';
import { Module } from '@nestjs/common';

import { AlgorithmsModule } from '../algorithms/algorithms.module';
import { JobRequestValidator } from './job-request.validator';
import { JobSourceResolver } from './job-source.resolver';
import { JobsController } from './jobs.controller';
import { JobsService } from './jobs.service';

@Module({
  imports: [JobStoreModule, AlgorithmsModule, HashQueueModule, QueueReconcilerModule],
  controllers: [JobsController],
  providers: [JobsService, JobRequestValidator, JobSourceResolver],
})
export class JobsModule {}
