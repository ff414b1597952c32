import { BenchmarkRepository } from '@hashq/bench';
import { rowsSqlProvider } from '@hashq/database';
import { Module } from '@nestjs/common';

import { BenchmarksController } from './benchmarks.controller';
import { BenchmarksService } from './benchmarks.service';

/** POST/GET /v1/benchmarks: eBASH-style runs on a worker of a chosen architecture. */
@Module({
  controllers: [BenchmarksController],
  providers: [BenchmarksService, rowsSqlProvider(BenchmarkRepository)],
})
export class BenchmarksModule {}
