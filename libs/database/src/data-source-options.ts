import type { HashqConfig } from '@hashq/config';
import { StateSealer } from '@hashq/crypto';
import type { DataSourceOptions } from 'typeorm';

import { CreateJobs1764676800000 } from '../../../migrations/1764676800000-CreateJobs';
import { CreateBenchmarks1764800000000 } from '../../../migrations/1764800000000-CreateBenchmarks';
import { BenchmarkWorkers1764900000000 } from '../../../migrations/1764900000000-BenchmarkWorkers';
import { CreateDigestSessions1764950000000 } from '../../../migrations/1764950000000-CreateDigestSessions';
import { sealJobStatesMigration } from '../../../migrations/1796300000000-SealJobStates';
import { sealSessionStatesMigration } from '../../../migrations/1796400000000-SealSessionStates';
import { CreateTenants1796500000000 } from '../../../migrations/1796500000000-CreateTenants';
import { CreateApiKeys1796600000000 } from '../../../migrations/1796600000000-CreateApiKeys';
import { TenantLimits1796700000000 } from '../../../migrations/1796700000000-TenantLimits';
import { CreateBatches1796800000000 } from '../../../migrations/1796800000000-CreateBatches';
import { OneJobEndTrigger1796900000000 } from '../../../migrations/1796900000000-OneJobEndTrigger';
import { CreateWebhooks1797000000000 } from '../../../migrations/1797000000000-CreateWebhooks';
import { UnsentWebhookDeliveries1797100000000 } from '../../../migrations/1797100000000-UnsentWebhookDeliveries';
import { JobEntity } from './job.entity';
import { guardedClientClass } from './pool-guard';

/** job_states has no entity: only the worker's fenced raw SQL touches it (apps/worker/src/checkpoint-store.ts). */
export const ENTITIES = [JobEntity];

/**
 * Migrations in the order they were written; listed by class so no glob depends on dist/ layout.
 * The state keys, when given, let a migration seal stored hash states.
 */
export function migrations(stateKeys: HashqConfig['stateKeys'] = []) {
  const sealer = stateKeys.length > 0 ? new StateSealer(stateKeys) : undefined;
  return [
    CreateJobs1764676800000,
    CreateBenchmarks1764800000000,
    BenchmarkWorkers1764900000000,
    CreateDigestSessions1764950000000,
    sealJobStatesMigration(sealer),
    sealSessionStatesMigration(sealer),
    CreateTenants1796500000000,
    CreateApiKeys1796600000000,
    TenantLimits1796700000000,
    CreateBatches1796800000000,
    OneJobEndTrigger1796900000000,
    CreateWebhooks1797000000000,
    UnsentWebhookDeliveries1797100000000,
  ];
}

/** What the connection needs; the state keys only where migrations run (see migrations()). */
export type DatabaseConfig = Pick<HashqConfig, 'databaseUrl' | 'databaseSchema'> &
  Partial<Pick<HashqConfig, 'stateKeys'>>;

export interface ConnectionErrorHandlers {
  /** An idle pooled connection failed (the pool drops it); TypeORM's own handler (a log line) without it. */
  onPoolError?(err: Error): void;
  /** Any pooled client's 'error' event, idle or not (see guardedClientClass); ignored without it. */
  onClientError?(err: Error): void;
}

/**
 * Connection options shared by the apps, the migration CLI and the tests. The schema is both
 * TypeORM's default and the session search_path, so the unqualified SQL of migrations lands in it.
 * Every pooled client has a permanent 'error' listener, so a connection PostgreSQL terminates can
 * never crash the process with an unhandled 'error' event.
 */
export function dataSourceOptions(
  config: DatabaseConfig,
  handlers: ConnectionErrorHandlers = {},
  /** PostgreSQL's application_name of the connections (pg_stat_activity tells the apps apart). */
  applicationName?: string,
): DataSourceOptions {
  const { onPoolError, onClientError = () => undefined } = handlers;
  return {
    type: 'postgres',
    url: config.databaseUrl,
    schema: config.databaseSchema,
    entities: ENTITIES,
    migrations: migrations(config.stateKeys),
    migrationsTableName: 'typeorm_migrations',
    synchronize: false,
    migrationsRun: false,
    logging: false,
    ...(applicationName ? { applicationName } : {}),
    // `Client`: pg-pool's option for the class it instantiates.
    extra: {
      options: `-c search_path=${config.databaseSchema}`,
      max: 10,
      Client: guardedClientClass(onClientError),
    },
    // An idle pooled connection that PostgreSQL terminates (restart, pg_terminate_backend) makes
    // the pool emit 'error'; unhandled, that would crash the process. The pool drops the client
    // and the next query opens a new one. Without a handler TypeORM's own (a log line) applies.
    ...(onPoolError ? { poolErrorHandler: onPoolError } : {}),
  };
}
