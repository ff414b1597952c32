// `npm run migration:run`: applies pending migrations to DATABASE_URL / DATABASE_SCHEMA.
import { createLogger, loadConfig, logFatal } from '@hashq/config';

import { runMigrations } from './migrate';

async function main(): Promise<void> {
  const config = loadConfig();
  const applied = await runMigrations(config);
  const database = new URL(config.databaseUrl).pathname.slice(1);
  createLogger('migrate', config.logLevel).info(
    { database, schema: config.databaseSchema, applied },
    applied.length ? `applied ${applied.length} migration(s)` : 'database is up to date',
  );
}

main().catch((err: unknown) => {
  logFatal('migrate', 'migrations failed', err);
  process.exit(1);
});
