// `npm run migration:run`: applies pending migrations to DATABASE_URL / DATABASE_SCHEMA.
import { ConfigError, loadConfig } from '@hashq/config';

import { runMigrations } from './migrate';

async function main(): Promise<void> {
  const config = loadConfig();
  const applied = await runMigrations(config);
  const target = `${new URL(config.databaseUrl).pathname.slice(1)} (schema ${config.databaseSchema})`;
  console.log(applied.length ? `applied ${applied.join(', ')} to ${target}` : `${target} is up to date`);
}

main().catch((err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
