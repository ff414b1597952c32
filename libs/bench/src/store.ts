/** The CLI's --save: a run recorded over a pg client (see BenchmarkRepository). */
import type { ClientBase } from 'pg';

import { BenchmarkRepository, type BenchmarkSql } from './benchmark-repository';
import type { BenchmarkRun } from './types';

/** BenchmarkSql over one pg client: its rows; a transaction is BEGIN … COMMIT on that client. */
export function pgSql(client: ClientBase): BenchmarkSql {
  const sql: BenchmarkSql = {
    rows: async <T>(text: string, params?: unknown[]) => (await client.query(text, params)).rows as T[],
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

/** --save of the CLI: DATABASE_URL and DATABASE_SCHEMA as for the service. */
export async function saveRunFromEnv(run: BenchmarkRun): Promise<string> {
  const { Client } = await import('pg');
  const schema = process.env.DATABASE_SCHEMA ?? 'public';
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`DATABASE_SCHEMA must be a lower-case SQL identifier`);
  const client = new Client({
    connectionString: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/hashq',
    options: `-c search_path=${schema}`,
  });
  await client.connect();
  try {
    return await new BenchmarkRepository(pgSql(client)).saveRun(run);
  } finally {
    await client.end();
  }
}
