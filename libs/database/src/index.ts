export * from './bigint.transformer';
export * from './job.entity';
export * from './data-source-options';
export * from './database.module';
export * from './migrate';
export * from './connection-errors';
export * from './pool-guard';
export * from './raw-sql';
