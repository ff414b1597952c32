import { DataSource } from 'typeorm';

import { type DatabaseConfig, dataSourceOptions } from './data-source-options';

/**
 * Creates the configured schema if needed and applies every pending migration; returns their names.
 * Without state keys a migration that must seal stored hash states refuses (see migrations/).
 */
export async function runMigrations(config: DatabaseConfig): Promise<string[]> {
  const dataSource = new DataSource(dataSourceOptions(config));
  await dataSource.initialize();
  try {
    await dataSource.query(`CREATE SCHEMA IF NOT EXISTS "${config.databaseSchema}"`);
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    return applied.map((migration) => migration.name);
  } finally {
    await dataSource.destroy();
  }
}
