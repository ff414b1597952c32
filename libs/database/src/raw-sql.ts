import { createHash } from 'node:crypto';

import type { FactoryProvider } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { type DataSource, type EntityManager, QueryFailedError } from 'typeorm';

/**
 * The rows of a raw `query()`. TypeORM's PostgreSQL driver answers a SELECT or an
 * INSERT … RETURNING with the rows, but an UPDATE or DELETE with [rows, affected].
 */
export function rawRows<T>(result: unknown): T[] {
  if (
    Array.isArray(result) &&
    result.length === 2 &&
    Array.isArray(result[0]) &&
    typeof result[1] === 'number'
  ) {
    return result[0] as T[];
  }
  return result as T[];
}

/** Raw SQL that answers rows; `transaction` runs `work` on one connection, atomically. */
export interface RowsSql {
  rows<T>(sql: string, params?: unknown[]): Promise<T[]>;
  transaction<T>(work: (tx: RowsSql) => Promise<T>): Promise<T>;
}

/** RowsSql on the app's TypeORM connection (e.g. for @hashq/bench's BenchmarkRepository). */
export function typeormSql(db: DataSource | EntityManager): RowsSql {
  return {
    rows: async <T>(sql: string, params?: unknown[]) => rawRows<T>(await db.query(sql, params)),
    transaction: (work) => db.transaction((manager) => work(typeormSql(manager))),
  };
}

/** A Nest provider of `type`, built on the app's TypeORM connection as RowsSql. */
export function rowsSqlProvider<T>(type: new (sql: RowsSql) => T): FactoryProvider<T> {
  return {
    provide: type,
    inject: [getDataSourceToken()],
    useFactory: (db: DataSource) => new type(typeormSql(db)),
  };
}

/** What a named statement needs of TypeORM's pg pool: pg prepares a query with a name once per connection. */
interface PreparingPool {
  query<R>(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: R[] }>;
}

/**
 * A statement on a hot path, prepared once per pooled connection: PostgreSQL then parses, analyzes
 * and (after its first few runs) plans it once, not at every call. The name is derived from the
 * text, so two statements never share one. A prepared statement's result columns are fixed when it
 * is prepared: name them (no `RETURNING *`), so a column added by a later migration cannot fail it.
 * A failed statement throws TypeORM's QueryFailedError, as every other query does (the error
 * filter, the connection-error test and the log's redaction of `parameters` expect its shape).
 */
export class PreparedStatement {
  private readonly name: string;

  constructor(readonly text: string) {
    this.name = `hq_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
  }

  async rows<T>(db: DataSource, values: unknown[]): Promise<T[]> {
    const pool = (db.driver as unknown as { master: PreparingPool }).master;
    try {
      return (await pool.query<T>({ name: this.name, text: this.text, values })).rows;
    } catch (err) {
      throw new QueryFailedError(this.text, values, err as Error);
    }
  }
}

/**
 * `value` as a jsonb parameter in PostgreSQL's binary form (version byte 1, then the JSON text).
 * node-postgres keeps a string parameter until the statement ends, so a big one (a page of rows)
 * outlives a scavenge and is promoted (past 128 KiB into V8's large-object space, freed only by
 * a full GC); the JSON text here dies before the query is sent, and the Buffer lives off the heap.
 */
export function jsonbParam(value: unknown): Buffer {
  const text = JSON.stringify(value);
  const bytes = Buffer.allocUnsafe(1 + Buffer.byteLength(text));
  bytes[0] = 1;
  bytes.write(text, 1);
  return bytes;
}
