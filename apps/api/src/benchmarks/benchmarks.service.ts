import {
  BENCHMARK_NO_WORKER,
  type BenchmarkJobData,
  benchmarkQueueName,
  BenchmarkRepository,
  type BenchmarkRequest,
  type BenchmarkRun,
  type BenchmarkRunRow,
  renderComparison,
  renderReport,
} from '@hashq/bench';
import { HASHQ_CONFIG, HASHQ_LOGGER, type HashqConfig } from '@hashq/config';
import { RedisErrorLogger, redisOptions } from '@hashq/jobs';
import { findAlgorithm } from '@hashq/native';
import {
  HttpStatus,
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { Queue } from 'bullmq';
import type { Logger } from 'pino';

import { ApiError } from '../common/api-error';
import type { CreateBenchmarkDto } from './create-benchmark.dto';

export interface BenchmarkSummary {
  id: string;
  status: string;
  arch: string;
  request: BenchmarkRequest;
  cpuModel: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function summary(row: BenchmarkRunRow): BenchmarkSummary {
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
  private readonly queues = new Map<string, Queue<BenchmarkJobData>>();
  private readonly redisErrors: RedisErrorLogger;
  private expiry?: NodeJS.Timeout;

  constructor(
    private readonly runs: BenchmarkRepository,
    @Inject(HASHQ_CONFIG) private readonly config: HashqConfig,
    @Inject(HASHQ_LOGGER) private readonly logger: Logger,
  ) {
    this.redisErrors = new RedisErrorLogger(logger);
  }

  async create(tenantId: string, dto: CreateBenchmarkDto): Promise<BenchmarkSummary> {
    const unknown = (dto.algorithms ?? []).filter((a) => !findAlgorithm(a));
    if (unknown.length)
      throw ApiError.badRequest(
        'UNKNOWN_ALGORITHM',
        `unknown algorithm(s): ${unknown.join(', ')}`,
        { unknown },
      );
    const request: BenchmarkRequest = {
      algorithms: dto.algorithms?.map((a) => findAlgorithm(a)!.name),
      implementations: dto.implementations,
      lengths: dto.lengths,
      quick: dto.quick,
    };
    const arch = dto.arch ?? process.arch;
    const row = await this.admit(tenantId, arch, request);
    await this.queue(arch).add(
      'benchmark',
      { runId: row.id },
      { jobId: row.id, removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } },
    );
    return summary(row);
  }

  async list(tenantId: string): Promise<BenchmarkSummary[]> {
    return (await this.runs.list(tenantId)).map(summary);
  }

  /** Another tenant's run is BENCHMARK_NOT_FOUND, exactly like a missing one. */
  async get(
    tenantId: string,
    id: string,
  ): Promise<BenchmarkSummary & { run: BenchmarkRun | null }> {
    const row = await this.row(tenantId, id);
    return { ...summary(row), run: row.report ?? null };
  }

  /** The HTML report of a finished run, or the comparison of two. */
  async report(tenantId: string, id: string, compareWith?: string): Promise<string> {
    const run = await this.finishedRun(tenantId, id);
    if (!compareWith) return renderReport(run);
    const other = await this.finishedRun(tenantId, compareWith);
    return renderComparison(other, run);
  }

  onApplicationBootstrap(): void {
    this.expiry = setInterval(() => void this.expireOrphans(), this.config.reconcileSeconds * 1000);
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.expiry);
    await Promise.all([...this.queues.values()].map((q) => q.close()));
  }

  /** The queued run, or the 422/429 that refuses it (see BenchmarkRepository.admit). */
  private async admit(
    tenantId: string,
    arch: string,
    request: BenchmarkRequest,
  ): Promise<BenchmarkRunRow> {
    const { benchmarkMaxActive: maxActive, benchmarkWorkerTimeoutSeconds: timeoutSeconds } =
      this.config;
    const admission = await this.runs.admit(arch, request, { maxActive, timeoutSeconds }, tenantId);
    if (admission.kind === 'no-worker') {
      const message = `no benchmark worker of architecture ${arch} reported in the last ${timeoutSeconds} s`;
      throw new ApiError(HttpStatus.UNPROCESSABLE_ENTITY, BENCHMARK_NO_WORKER, message, {
        arch,
        timeoutSeconds,
      });
    }
    if (admission.kind === 'limit-reached') {
      const { active } = admission;
      const message = `${active} benchmark runs are queued or running (at most ${maxActive})`;
      throw new ApiError(HttpStatus.TOO_MANY_REQUESTS, 'BENCHMARK_LIMIT_REACHED', message, {
        active,
        maxActive,
      });
    }
    return admission.run;
  }

  private async expireOrphans(): Promise<void> {
    try {
      const expired = await this.runs.expireOrphanedRuns(this.config.benchmarkWorkerTimeoutSeconds);
      if (expired.length > 0)
        this.logger.warn({ expired, code: BENCHMARK_NO_WORKER }, 'benchmark runs expired');
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'could not expire benchmark runs');
    }
  }

  private async finishedRun(tenantId: string, id: string): Promise<BenchmarkRun> {
    const row = await this.row(tenantId, id);
    if (row.status !== 'succeeded' || !row.report) {
      throw new ApiError(
        HttpStatus.CONFLICT,
        'BENCHMARK_NOT_FINISHED',
        `benchmark ${id} is ${row.status}`,
        { status: row.status },
      );
    }
    return { ...row.report, id: row.id };
  }

  private async row(tenantId: string, id: string): Promise<BenchmarkRunRow> {
    if (!UUID.test(id)) throw ApiError.badRequest('INVALID_ID', 'a benchmark id is a UUID');
    const row = await this.runs.find(id, tenantId);
    if (!row) throw new ApiError(HttpStatus.NOT_FOUND, 'BENCHMARK_NOT_FOUND', `no benchmark ${id}`);
    return row;
  }

  private queue(arch: string): Queue<BenchmarkJobData> {
    let queue = this.queues.get(arch);
    if (!queue) {
      queue = new Queue<BenchmarkJobData>(benchmarkQueueName(arch), {
        connection: redisOptions(this.config.redisUrl, 'producer'),
        prefix: this.config.queuePrefix,
      });
      this.redisErrors.watch(queue, { queue: benchmarkQueueName(arch) });
      this.queues.set(arch, queue);
    }
    return queue;
  }
}
