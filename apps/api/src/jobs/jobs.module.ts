import { Module } from '@nestjs/common';

import { JobStoreModule } from '@hashq/jobs';

import { AlgorithmsModule } from '../algorithms/algorithms.module';
import { QueueModule } from '../queue.module';
import { JobRequestValidator } from './job-request.validator';
import { JobSourceResolver } from './job-source.resolver';
import { JobsController } from './jobs.controller';
import { JobsService } from './jobs.service';
import { QueueReconciler } from './queue-reconciler.service';

@Module({
  imports: [JobStoreModule, AlgorithmsModule, QueueModule],
  controllers: [JobsController],
  providers: [JobsService, JobRequestValidator, JobSourceResolver, QueueReconciler],
})
export class JobsModule {}
