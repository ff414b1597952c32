import { Module } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import { benchQueueName } from '@hashq/bench';
import { BenchmarkProcessor } from './benchmark.processor.js';

/** The benchmark consumer of this worker's architecture (issue 5). */
@Module({
  imports: [BullModule.registerQueue({ name: benchQueueName() })],
  providers: [BenchmarkProcessor],
})
export class BenchmarkModule {}
