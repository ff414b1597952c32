import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';

import { HASHQ_CONFIG, type HashqConfig } from '@hashq/config';

import { dataSourceOptions } from './data-source-options';

/** The TypeORM connection of an app; it never synchronizes nor runs migrations by itself. */
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [HASHQ_CONFIG],
      useFactory: (config: HashqConfig) => dataSourceOptions(config),
    }),
  ],
  exports: [TypeOrmModule],
})
export class DatabaseModule {}
