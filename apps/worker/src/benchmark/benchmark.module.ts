import { benchmarkQueueName, BenchmarkRepository } from '@hashq/bench';
import { rowsSqlProvider } from '@hashq/database';
import { BullModule } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';

import { BenchmarkProcessor } from './benchmark.processor';
import { BenchmarkPresence } from './benchmark-presence';

/** The benchmark consumer of this worker's architecture, and its presence for the API. */
@Module({
  imports: [BullModule.registerQueue({ name: benchmarkQueueName() })],
  providers: [rowsSqlProvider(BenchmarkRepository), BenchmarkProcessor, BenchmarkPresence],
})
export class BenchmarkModule {}
