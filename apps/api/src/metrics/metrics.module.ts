import { Module } from '@nestjs/common';

import { JobStoreModule } from '@hashq/jobs';

import { QueueModule } from '../queue.module';
import { MetricsController } from './metrics.controller';
import { MetricsService } from './metrics.service';

@Module({
  imports: [JobStoreModule, QueueModule],
  controllers: [MetricsController],
  providers: [MetricsService],
})
export class MetricsModule {}
