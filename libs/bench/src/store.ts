/** The CLI's --save: a run recorded over a pg client (see BenchmarkRepository). */
import type { HashqConfig } from '@hashq/config';
import type { ClientBase } from 'pg';

import { BenchmarkRepository, type BenchmarkSql } from './benchmark-repository';
import type { BenchmarkRun } from './types';

/** BenchmarkSql over one pg client: its rows; a transaction is BEGIN … COMMIT on that client. */
export function pgSql(client: ClientBase): BenchmarkSql {
  const sql: BenchmarkSql = {
    rows: async <T>(text: string, params?: unknown[]) =>
      (await client.query(text, params)).rows as T[],
    transaction: async (work) => {
      await client.query('BEGIN');
      try {
        const result = await work(sql);
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK');
        throw err;
      }
    },
  };
  return sql;
}

/** --save of the CLI: the service's database (DATABASE_URL and DATABASE_SCHEMA, validated by @hashq/config). */
export async function saveRunTo(
  database: Pick<HashqConfig, 'databaseUrl' | 'databaseSchema'>,
  run: BenchmarkRun,
): Promise<string> {
  const { Client } = await import('pg');
  const client = new Client({
    connectionString: database.databaseUrl,
    options: `-c search_path=${database.databaseSchema}`,
  });
  await client.connect();
  try {
    return await new BenchmarkRepository(pgSql(client)).saveRun(run);
  } finally {
    await client.end();
  }
}
