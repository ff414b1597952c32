/**
 * Records runs in PostgreSQL: one benchmark_runs row (machine, settings,
 * the whole run as JSON for the report) and one benchmark_results row per
 * algorithm × implementation × length with the quartiles
 * (migrations/1764800000000-CreateBenchmarks.ts); when the workers of each
 * architecture last reported (benchmark_workers, migrations/1764900000000-BenchmarkWorkers.ts).
 */
import type { HashqConfig } from '@hashq/config';

import type { BenchmarkRun } from './types';

/** Both a TypeORM DataSource and a pg client adapter fit. */
export interface Queryable {
  query(sql: string, params?: unknown[]): Promise<unknown>;
}

/** Rows of a query result: TypeORM answers an array (UPDATE … RETURNING: [rows, affected]), pg { rows }. */
function rowsOf<T>(result: unknown, update = false): T[] {
  if (!Array.isArray(result)) return (result as { rows: T[] }).rows;
  return (update ? result[0] : result) as T[];
}

/** Results of one run as rows: every length, and "long" as length NULL. */
function resultRows(run: BenchmarkRun): unknown[][] {
  const rows: unknown[][] = [];
  for (const s of run.series) {
    for (const l of s.lengths) {
      rows.push([s.algorithm, s.provider, s.implementation, l.length, l.cyclesPerByte.q1, l.cyclesPerByte.median, l.cyclesPerByte.q3, l.spread]);
    }
    const q = s.long.cyclesPerByte;
    rows.push([s.algorithm, s.provider, s.implementation, null, q.q1, q.median, q.q3, s.long.spread]);
  }
  return rows;
}

/** Inserts the run (with `id` when given, e.g. the API's job id); returns its id. */
export async function saveRun(db: Queryable, run: BenchmarkRun, id?: string): Promise<string> {
  const inserted = (await db.query(
    `INSERT INTO benchmark_runs (id, status, arch, cpu_model, machine, settings, report, started_at, finished_at)
     VALUES (COALESCE($1::uuid, gen_random_uuid()), 'succeeded', $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (id) DO UPDATE SET status = 'succeeded', arch = $2, cpu_model = $3, machine = $4, settings = $5,
       report = $6, started_at = $7, finished_at = $8, error_message = NULL, error_code = NULL
     RETURNING id`,
    [id ?? null, run.machine.arch, run.machine.cpuModel, run.machine, run.settings, run, run.startedAt, run.finishedAt],
  )) as { id: string }[] | { rows: { id: string }[] };
  const runId = rowsOf<{ id: string }>(inserted)[0].id;
  await db.query('DELETE FROM benchmark_results WHERE run_id = $1', [runId]);
  const rows = resultRows(run);
  const CHUNK = 200;
  for (let i = 0; i < rows.length; i += CHUNK) {
    const chunk = rows.slice(i, i + CHUNK);
    const values = chunk.map((_, r) => `($1, ${Array.from({ length: 8 }, (_, c) => `$${2 + r * 8 + c}`).join(', ')})`);
    await db.query(
      `INSERT INTO benchmark_results (run_id, algorithm, provider, implementation, length, q1, median, q3, spread) VALUES ${values.join(', ')}`,
      [runId, ...chunk.flat()],
    );
  }
  return runId;
}

/** Code of a run that failed because no worker of its architecture reported for the timeout (and of the 422). */
export const BENCHMARK_NO_WORKER = 'BENCHMARK_NO_WORKER';

/** A worker of `arch` is alive now: one benchmark_workers row per architecture. */
export async function recordBenchWorker(db: Queryable, arch: string): Promise<void> {
  await db.query(
    `INSERT INTO benchmark_workers (arch, seen_at) VALUES ($1, now()) ON CONFLICT (arch) DO UPDATE SET seen_at = now()`,
    [arch],
  );
}

/** Whether a worker of `arch` reported within the last `timeoutSeconds`. */
export async function benchWorkerSeen(db: Queryable, arch: string, timeoutSeconds: number): Promise<boolean> {
  const rows = rowsOf<{ seen: boolean }>(
    await db.query(
      `SELECT EXISTS (SELECT 1 FROM benchmark_workers
                       WHERE arch = $1 AND seen_at > now() - make_interval(secs => $2)) AS seen`,
      [arch, timeoutSeconds],
    ),
  );
  return rows[0].seen;
}

/**
 * Queued or running runs whose architecture has had no worker for `timeoutSeconds` end 'failed'
 * with BENCHMARK_NO_WORKER (a running one lost its worker: that worker reported for its
 * architecture too). Returns their ids.
 */
export async function expireOrphanedRuns(db: Queryable, timeoutSeconds: number): Promise<string[]> {
  const result = await db.query(
    `UPDATE benchmark_runs r
        SET status = 'failed', error_code = $2, error_message = $3, finished_at = now()
      WHERE r.status IN ('queued', 'running')
        AND NOT EXISTS (SELECT 1 FROM benchmark_workers w
                         WHERE w.arch = r.arch AND w.seen_at > now() - make_interval(secs => $1))
      RETURNING r.id`,
    [timeoutSeconds, BENCHMARK_NO_WORKER, `no worker of this architecture reported for ${timeoutSeconds} s`],
  );
  return rowsOf<{ id: string }>(result, true).map((row) => row.id);
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
    return await saveRun(client, run);
  } finally {
    await client.end();
  }
}
