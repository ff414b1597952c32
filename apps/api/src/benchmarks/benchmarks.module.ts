import { Module } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';

import { BenchmarkRepository } from '@hashq/bench';
import { typeormSql } from '@hashq/database';

import { BenchmarksController } from './benchmarks.controller';
import { BenchmarksService } from './benchmarks.service';

/** POST/GET /v1/benchmarks: eBASH-style runs on a worker of a chosen architecture. */
@Module({
  controllers: [BenchmarksController],
  providers: [
    BenchmarksService,
    {
      provide: BenchmarkRepository,
      inject: [getDataSourceToken()],
      useFactory: (db: DataSource) => new BenchmarkRepository(typeormSql(db)),
    },
  ],
})
export class BenchmarksModule {}
