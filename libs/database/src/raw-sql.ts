import type { FactoryProvider } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';

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
