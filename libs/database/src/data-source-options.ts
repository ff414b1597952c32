import type { HashqConfig } from '@hashq/config';
import type { DataSourceOptions } from 'typeorm';

import { CreateJobs1764676800000 } from '../../../migrations/1764676800000-CreateJobs';
import { CreateBenchmarks1764800000000 } from '../../../migrations/1764800000000-CreateBenchmarks';
import { JobStateEntity } from './job-state.entity';
import { JobEntity } from './job.entity';

export const ENTITIES = [JobEntity, JobStateEntity];

/** Migrations in the order they were written; listed by class so no glob depends on dist/ layout. */
export const MIGRATIONS = [CreateJobs1764676800000, CreateBenchmarks1764800000000];

/**
 * Connection options shared by the apps, the migration CLI and the tests. The schema is both
 * TypeORM's default and the session search_path, so the unqualified SQL of migrations lands in it.
 */
export function dataSourceOptions(
  config: Pick<HashqConfig, 'databaseUrl' | 'databaseSchema'>,
  onPoolError?: (err: Error) => void,
): DataSourceOptions {
  return {
    type: 'postgres',
    url: config.databaseUrl,
    schema: config.databaseSchema,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'typeorm_migrations',
    synchronize: false,
    migrationsRun: false,
    logging: false,
    extra: { options: `-c search_path=${config.databaseSchema}`, max: 10 },
    // An idle pooled connection that PostgreSQL terminates (restart, pg_terminate_backend) makes
    // the pool emit 'error'; unhandled, that would crash the process. The pool drops the client
    // and the next query opens a new one. Without a handler TypeORM's own (a log line) applies.
    ...(onPoolError ? { poolErrorHandler: onPoolError } : {}),
  };
}
