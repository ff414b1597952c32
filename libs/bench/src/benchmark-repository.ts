/**
 * Every statement on the benchmark tables (migrations/1764800000000-CreateBenchmarks.ts,
 * migrations/1764900000000-BenchmarkWorkers.ts): benchmark_runs (one row per run: request,
 * machine, settings, the whole run as JSON for the report), benchmark_results (one row per
 * algorithm × implementation × length with the quartiles) and benchmark_workers (when the
 * workers of each architecture last reported).
 */
import type { BenchmarkRequest } from './queue';
import type { BenchmarkRun } from './types';

/**
 * Runs one statement and answers its rows; `transaction` runs `work` on one connection, atomically.
 * The apps pass their TypeORM connection (typeormSql of @hashq/database), the CLI a pg client (pgSql).
 */
export interface BenchmarkSql {
  rows<T>(sql: string, params?: unknown[]): Promise<T[]>;
  transaction<T>(work: (tx: BenchmarkSql) => Promise<T>): Promise<T>;
}

/** Code of a run that failed because no worker of its architecture reported for the timeout (and of the 422). */
export const BENCHMARK_NO_WORKER = 'BENCHMARK_NO_WORKER';

/** A benchmark_runs row without the results. */
export interface BenchmarkRunRow {
  id: string;
  status: string;
  arch: string;
  request: BenchmarkRequest;
  cpu_model: string | null;
  error_code: string | null;
  error_message: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  report?: BenchmarkRun | null;
}

/** Why a run was not admitted, or the run that was. */
export type BenchmarkAdmission =
  | { kind: 'admitted'; run: BenchmarkRunRow }
  | { kind: 'no-worker' }
  | { kind: 'limit-reached'; active: number };

const SUMMARY_COLUMNS =
  'id, status, arch, request, cpu_model, error_code, error_message, created_at, started_at, finished_at';

/** Results of one run as rows: every length, and "long" as length NULL. */
function resultRows(run: BenchmarkRun): unknown[][] {
  const rows: unknown[][] = [];
  for (const s of run.series) {
    for (const l of s.lengths) {
      rows.push([
        s.algorithm,
        s.provider,
        s.implementation,
        l.length,
        l.cyclesPerByte.q1,
        l.cyclesPerByte.median,
        l.cyclesPerByte.q3,
        l.spread,
      ]);
    }
    const q = s.long.cyclesPerByte;
    rows.push([
      s.algorithm,
      s.provider,
      s.implementation,
      null,
      q.q1,
      q.median,
      q.q3,
      s.long.spread,
    ]);
  }
  return rows;
}

export class BenchmarkRepository {
  constructor(private readonly db: BenchmarkSql) {}

  /**
   * Inserts a queued run if a worker of `arch` reported within `timeoutSeconds` and fewer than
   * `maxActive` runs are queued or running; the check and the insert hold one advisory lock, so
   * concurrent requests cannot overshoot the limit.
   */
  admit(
    arch: string,
    request: BenchmarkRequest,
    limits: { maxActive: number; timeoutSeconds: number },
    tenantId = 'default',
  ): Promise<BenchmarkAdmission> {
    return this.db.transaction(async (tx) => {
      await tx.rows(`SELECT pg_advisory_xact_lock(hashtext('hashq:benchmark_runs'))`);
      if (!(await workerSeen(tx, arch, limits.timeoutSeconds))) return { kind: 'no-worker' };
      const [{ active }] = await tx.rows<{ active: number }>(
        `SELECT count(*)::int AS active FROM benchmark_runs WHERE status IN ('queued', 'running')`,
      );
      if (active >= limits.maxActive) return { kind: 'limit-reached', active };
      const [run] = await tx.rows<BenchmarkRunRow>(
        `INSERT INTO benchmark_runs (status, arch, request, tenant_id) VALUES ('queued', $1, $2, $3) RETURNING ${SUMMARY_COLUMNS}`,
        [arch, request, tenantId],
      );
      return { kind: 'admitted', run };
    });
  }

  /** The tenant's 100 newest runs (every tenant's without one), without their reports. */
  list(tenantId?: string): Promise<BenchmarkRunRow[]> {
    return this.db.rows(
      `SELECT ${SUMMARY_COLUMNS} FROM benchmark_runs WHERE $1::text IS NULL OR tenant_id = $1
        ORDER BY created_at DESC, id DESC LIMIT 100`,
      [tenantId ?? null],
    );
  }

  /** The run with its report (when it is the tenant's, if one is given), or undefined. */
  async find(id: string, tenantId?: string): Promise<BenchmarkRunRow | undefined> {
    const [row] = await this.db.rows<BenchmarkRunRow>(
      `SELECT ${SUMMARY_COLUMNS}, report FROM benchmark_runs WHERE id = $1 AND ($2::text IS NULL OR tenant_id = $2)`,
      [id, tenantId ?? null],
    );
    return row;
  }

  /** Marks a queued (or redelivered running) run as running; its request, or null when it is neither. */
  async start(runId: string): Promise<BenchmarkRequest | null> {
    const [row] = await this.db.rows<{ request: BenchmarkRequest }>(
      `UPDATE benchmark_runs SET status = 'running', started_at = now() WHERE id = $1 AND status IN ('queued', 'running') RETURNING request`,
      [runId],
    );
    return row ? row.request : null;
  }

  /** Inserts the run (with `id` when given, e.g. the API's job id); returns its id. */
  async saveRun(run: BenchmarkRun, id?: string): Promise<string> {
    const [{ id: runId }] = await this.db.rows<{ id: string }>(
      `INSERT INTO benchmark_runs (id, status, arch, cpu_model, machine, settings, report, started_at, finished_at)
       VALUES (COALESCE($1::uuid, gen_random_uuid()), 'succeeded', $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (id) DO UPDATE SET status = 'succeeded', arch = $2, cpu_model = $3, machine = $4, settings = $5,
         report = $6, started_at = $7, finished_at = $8, error_message = NULL, error_code = NULL
       RETURNING id`,
      [
        id ?? null,
        run.machine.arch,
        run.machine.cpuModel,
        run.machine,
        run.settings,
        run,
        run.startedAt,
        run.finishedAt,
      ],
    );
    await this.db.rows('DELETE FROM benchmark_results WHERE run_id = $1', [runId]);
    const rows = resultRows(run);
    const CHUNK = 200;
    for (let i = 0; i < rows.length; i += CHUNK) {
      const chunk = rows.slice(i, i + CHUNK);
      const values = chunk.map(
        (_, r) => `($1, ${Array.from({ length: 8 }, (_, c) => `$${2 + r * 8 + c}`).join(', ')})`,
      );
      await this.db.rows(
        `INSERT INTO benchmark_results (run_id, algorithm, provider, implementation, length, q1, median, q3, spread) VALUES ${values.join(', ')}`,
        [runId, ...chunk.flat()],
      );
    }
    return runId;
  }

  /** The run ends 'failed' with BENCHMARK_FAILED and `message`. */
  async fail(runId: string, message: string): Promise<void> {
    await this.db.rows(
      `UPDATE benchmark_runs
          SET status = 'failed', error_code = 'BENCHMARK_FAILED', error_message = $2, finished_at = now()
        WHERE id = $1`,
      [runId, message],
    );
  }

  /** A worker of `arch` is alive now: one benchmark_workers row per architecture. */
  async recordWorker(arch: string): Promise<void> {
    await this.db.rows(
      `INSERT INTO benchmark_workers (arch, seen_at) VALUES ($1, now()) ON CONFLICT (arch) DO UPDATE SET seen_at = now()`,
      [arch],
    );
  }

  /**
   * Queued or running runs whose architecture has had no worker for `timeoutSeconds` end 'failed'
   * with BENCHMARK_NO_WORKER (a running one lost its worker: that worker reported for its
   * architecture too). Returns their ids.
   */
  async expireOrphanedRuns(timeoutSeconds: number): Promise<string[]> {
    const rows = await this.db.rows<{ id: string }>(
      `UPDATE benchmark_runs r
          SET status = 'failed', error_code = $2, error_message = $3, finished_at = now()
        WHERE r.status IN ('queued', 'running')
          AND NOT EXISTS (SELECT 1 FROM benchmark_workers w
                           WHERE w.arch = r.arch AND w.seen_at > now() - make_interval(secs => $1))
        RETURNING r.id`,
      [
        timeoutSeconds,
        BENCHMARK_NO_WORKER,
        `no worker of this architecture reported for ${timeoutSeconds} s`,
      ],
    );
    return rows.map((row) => row.id);
  }
}

/** Whether a worker of `arch` reported within the last `timeoutSeconds`. */
async function workerSeen(
  db: BenchmarkSql,
  arch: string,
  timeoutSeconds: number,
): Promise<boolean> {
  const [row] = await db.rows<{ seen: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM benchmark_workers
                     WHERE arch = $1 AND seen_at > now() - make_interval(secs => $2)) AS seen`,
    [arch, timeoutSeconds],
  );
  return row.seen;
}
