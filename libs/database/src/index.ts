export * from './bigint.transformer';
export * from './connection-errors';
export * from './data-source-options';
export * from './database.module';
export * from './job.entity';
export * from './migrate';
export * from './pool-guard';
export * from './raw-sql';
