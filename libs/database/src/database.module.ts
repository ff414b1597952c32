import { HASHQ_APP_NAME, HASHQ_CONFIG, HASHQ_LOGGER, type HashqConfig } from '@hashq/config';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { Logger } from 'pino';

import { dataSourceOptions } from './data-source-options';
import { pgErrorSummary } from './pool-guard';

/**
 * The TypeORM connection of an app (the API and the worker, `hashq-api` and `hashq-worker` in
 * pg_stat_activity); it never synchronizes nor runs migrations by itself. A connection
 * PostgreSQL terminates (restart, failover, pg_terminate_backend) is logged, never an uncaught
 * 'error' event.
 */
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [HASHQ_CONFIG, HASHQ_LOGGER, HASHQ_APP_NAME],
      useFactory: (config: HashqConfig, logger: Logger, name: string) =>
        // only message and code: the error carries the pg client (and its connection settings)
        dataSourceOptions(
          config,
          {
            onPoolError: (err) =>
              logger.warn({ err: pgErrorSummary(err) }, 'postgres connection lost'),
            onClientError: (err) =>
              logger.debug({ err: pgErrorSummary(err) }, 'postgres client error'),
          },
          `hashq-${name}`,
        ),
    }),
  ],
  exports: [TypeOrmModule],
})
export class DatabaseModule {}
