import { HttpStatus, Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';

import { HASHQ_CONFIG, HASHQ_LOGGER, type HashqConfig } from '@hashq/config';
import {
  BENCHMARK_NO_WORKER,
  benchQueueName,
  benchWorkerSeen,
  expireOrphanedRuns,
  renderComparison,
  renderReport,
  type BenchJobData,
  type BenchmarkRun,
  type BenchRequest,
} from '@hashq/bench';
import { RedisErrorLogger, redisOptions } from '@hashq/jobs';
import { findAlgorithm } from '@hashq/native';

import { ApiError } from '../common/api-error';
import type { CreateBenchmarkDto } from './create-benchmark.dto';

export interface BenchmarkSummary {
  id: string;
  status: string;
  arch: string;
  request: BenchRequest;
  cpuModel: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

interface RunRow {
  id: string;
  status: string;
  arch: string;
  request: BenchRequest;
  cpu_model: string | null;
  error_code: string | null;
  error_message: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  report?: BenchmarkRun | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SUMMARY_COLUMNS =
  'id, status, arch, request, cpu_model, error_code, error_message, created_at, started_at, finished_at';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function summary(row: RunRow): BenchmarkSummary {
  return {
    id: row.id,
    status: row.status,
    arch: row.arch,
    request: row.request,
    cpuModel: row.cpu_model,
    errorCode: row.error_code,
    errorMessage: row.error_message,
    createdAt: row.created_at.toISOString(),
    startedAt: iso(row.started_at),
    finishedAt: iso(row.finished_at),
  };
}

/**
 * Benchmark runs: PostgreSQL records them, a queue per CPU architecture dispatches them. A run is
 * admitted only while fewer than BENCHMARK_MAX_ACTIVE are queued or running and a worker of its
 * architecture reported within BENCHMARK_WORKER_TIMEOUT_SECONDS; every RECONCILE_SECONDS the runs
 * of an architecture that lost its workers end failed (BENCHMARK_NO_WORKER) instead of waiting forever.
 */
@Injectable()
export class BenchmarksService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly queues = new Map<string, Queue<BenchJobData>>();
  private readonly redisErrors: RedisErrorLogger;
  private expiry?: NodeJS.Timeout;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(HASHQ_CONFIG) private readonly config: HashqConfig,
    @Inject(HASHQ_LOGGER) private readonly logger: Logger,
  ) {
    this.redisErrors = new RedisErrorLogger(logger);
  }

  async create(dto: CreateBenchmarkDto): Promise<BenchmarkSummary> {
    const unknown = (dto.algorithms ?? []).filter((a) => !findAlgorithm(a));
    if (unknown.length) throw ApiError.badRequest('UNKNOWN_ALGORITHM', `unknown algorithm(s): ${unknown.join(', ')}`, { unknown });
    const request: BenchRequest = {
      algorithms: dto.algorithms?.map((a) => findAlgorithm(a)!.name),
      implementations: dto.implementations,
      lengths: dto.lengths,
      quick: dto.quick,
    };
    const arch = dto.arch ?? process.arch;
    const row = await this.admit(arch, request);
    await this.queue(arch).add('benchmark', { runId: row.id }, { jobId: row.id, removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } });
    return summary(row);
  }

  async list(): Promise<BenchmarkSummary[]> {
    const rows = (await this.db.query(`SELECT ${SUMMARY_COLUMNS} FROM benchmark_runs ORDER BY created_at DESC, id DESC LIMIT 100`)) as RunRow[];
    return rows.map(summary);
  }

  async get(id: string): Promise<BenchmarkSummary & { run: BenchmarkRun | null }> {
    const row = await this.row(id);
    return { ...summary(row), run: row.report ?? null };
  }

  /** The HTML report of a finished run, or the comparison of two. */
  async report(id: string, compareWith?: string): Promise<string> {
    const run = await this.finishedRun(id);
    if (!compareWith) return renderReport(run);
    const other = await this.finishedRun(compareWith);
    return renderComparison(other, run);
  }

  onApplicationBootstrap(): void {
    this.expiry = setInterval(() => void this.expireOrphans(), this.config.reconcileSeconds * 1000);
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.expiry);
    await Promise.all([...this.queues.values()].map((q) => q.close()));
  }

  /**
   * Inserts the run if a worker of `arch` is alive and the active runs are below the limit; the
   * check and the insert hold one advisory lock, so concurrent requests cannot overshoot it.
   */
  private admit(arch: string, request: BenchRequest): Promise<RunRow> {
    const { benchmarkMaxActive: maxActive, benchmarkWorkerTimeoutSeconds: timeoutSeconds } = this.config;
    return this.db.transaction(async (tx) => {
      await tx.query(`SELECT pg_advisory_xact_lock(hashtext('hashq:benchmark_runs'))`);
      if (!(await benchWorkerSeen(tx, arch, timeoutSeconds))) {
        const message = `no benchmark worker of architecture ${arch} reported in the last ${timeoutSeconds} s`;
        throw new ApiError(HttpStatus.UNPROCESSABLE_ENTITY, BENCHMARK_NO_WORKER, message, { arch, timeoutSeconds });
      }
      const [{ active }] = (await tx.query(
        `SELECT count(*)::int AS active FROM benchmark_runs WHERE status IN ('queued', 'running')`,
      )) as { active: number }[];
      if (active >= maxActive) {
        const message = `${active} benchmark runs are queued or running (at most ${maxActive})`;
        throw new ApiError(HttpStatus.TOO_MANY_REQUESTS, 'BENCHMARK_LIMIT_REACHED', message, { active, maxActive });
      }
      const [row] = (await tx.query(
        `INSERT INTO benchmark_runs (status, arch, request) VALUES ('queued', $1, $2) RETURNING ${SUMMARY_COLUMNS}`,
        [arch, request],
      )) as RunRow[];
      return row;
    });
  }

  private async expireOrphans(): Promise<void> {
    try {
      const expired = await expireOrphanedRuns(this.db, this.config.benchmarkWorkerTimeoutSeconds);
      if (expired.length > 0) this.logger.warn({ expired, code: BENCHMARK_NO_WORKER }, 'benchmark runs expired');
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'could not expire benchmark runs');
    }
  }

  private async finishedRun(id: string): Promise<BenchmarkRun> {
    const row = await this.row(id);
    if (row.status !== 'succeeded' || !row.report) {
      throw new ApiError(HttpStatus.CONFLICT, 'BENCHMARK_NOT_FINISHED', `benchmark ${id} is ${row.status}`, { status: row.status });
    }
    return { ...row.report, id: row.id };
  }

  private async row(id: string): Promise<RunRow> {
    if (!UUID.test(id)) throw ApiError.badRequest('INVALID_ID', 'a benchmark id is a UUID');
    const [row] = (await this.db.query(`SELECT ${SUMMARY_COLUMNS}, report FROM benchmark_runs WHERE id = $1`, [id])) as RunRow[];
    if (!row) throw new ApiError(HttpStatus.NOT_FOUND, 'BENCHMARK_NOT_FOUND', `no benchmark ${id}`);
    return row;
  }

  private queue(arch: string): Queue<BenchJobData> {
    let queue = this.queues.get(arch);
    if (!queue) {
      queue = new Queue<BenchJobData>(benchQueueName(arch), {
        connection: redisOptions(this.config.redisUrl, 'producer'),
        prefix: this.config.queuePrefix,
      });
      this.redisErrors.watch(queue, { queue: benchQueueName(arch) });
      this.queues.set(arch, queue);
    }
    return queue;
  }
}
