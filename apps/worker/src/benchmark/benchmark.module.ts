import { Module } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import { benchmarkQueueName, BenchmarkRepository } from '@hashq/bench';
import { rowsSqlProvider } from '@hashq/database';
import { BenchmarkPresence } from './benchmark-presence.js';
import { BenchmarkProcessor } from './benchmark.processor.js';

/** The benchmark consumer of this worker's architecture, and its presence for the API. */
@Module({
  imports: [BullModule.registerQueue({ name: benchmarkQueueName() })],
  providers: [rowsSqlProvider(BenchmarkRepository), BenchmarkProcessor, BenchmarkPresence],
})
export class BenchmarkModule {}
