import { Module } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { benchmarkQueueName, BenchmarkRepository } from '@hashq/bench';
import { typeormSql } from '@hashq/database';
import { BenchmarkPresence } from './benchmark-presence.js';
import { BenchmarkProcessor } from './benchmark.processor.js';

/** The benchmark consumer of this worker's architecture, and its presence for the API. */
@Module({
  imports: [BullModule.registerQueue({ name: benchmarkQueueName() })],
  providers: [
    {
      provide: BenchmarkRepository,
      inject: [getDataSourceToken()],
      useFactory: (db: DataSource) => new BenchmarkRepository(typeormSql(db)),
    },
    BenchmarkProcessor,
    BenchmarkPresence,
  ],
})
export class BenchmarkModule {}
