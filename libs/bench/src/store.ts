/**
 * Records runs in PostgreSQL: one benchmark_runs row (machine, settings,
 * the whole run as JSON for the report) and one benchmark_results row per
 * algorithm × implementation × length with the quartiles
 * (migrations/1764800000000-CreateBenchmarks.ts).
 */
import type { BenchmarkRun } from './types';

/** Both a TypeORM DataSource and a pg client adapter fit. */
export interface Queryable {
  query(sql: string, params?: unknown[]): Promise<unknown>;
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
       report = $6, started_at = $7, finished_at = $8, error_message = NULL
     RETURNING id`,
    [id ?? null, run.machine.arch, run.machine.cpuModel, run.machine, run.settings, run, run.startedAt, run.finishedAt],
  )) as { id: string }[] | { rows: { id: string }[] };
  const runId = (Array.isArray(inserted) ? inserted : inserted.rows)[0].id;
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
    return await saveRun(client, run);
  } finally {
    await client.end();
  }
}
