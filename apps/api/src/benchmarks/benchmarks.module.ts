import { Module } from '@nestjs/common';

import { BenchmarksController } from './benchmarks.controller';
import { BenchmarksService } from './benchmarks.service';

/** POST/GET /v1/benchmarks: eBASH-style runs on a worker of a chosen architecture (issue 5). */
@Module({
  controllers: [BenchmarksController],
  providers: [BenchmarksService],
})
export class BenchmarksModule {}
