import { Module } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import { benchQueueName } from '@hashq/bench';
import { BenchmarkPresence } from './benchmark-presence.js';
import { BenchmarkProcessor } from './benchmark.processor.js';

/** The benchmark consumer of this worker's architecture (issue 5), and its presence for the API. */
@Module({
  imports: [BullModule.registerQueue({ name: benchQueueName() })],
  providers: [BenchmarkProcessor, BenchmarkPresence],
})
export class BenchmarkModule {}
