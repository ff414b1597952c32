import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';

import type { Logger } from 'pino';

import { HASHQ_CONFIG, HASHQ_LOGGER, type HashqConfig } from '@hashq/config';

import { dataSourceOptions } from './data-source-options';

/** The TypeORM connection of an app; it never synchronizes nor runs migrations by itself. */
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [HASHQ_CONFIG, HASHQ_LOGGER],
      useFactory: (config: HashqConfig, logger: Logger) =>
        // only message and code: the error carries the pg client (and its connection settings)
        dataSourceOptions(config, (err) =>
          logger.warn({ err: { message: err.message, code: (err as NodeJS.ErrnoException).code } }, 'postgres connection lost'),
        ),
    }),
  ],
  exports: [TypeOrmModule],
})
export class DatabaseModule {}
