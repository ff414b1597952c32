import { Inject } from '@nestjs/common';
import { Processor, WorkerHost } from '@nestjs/bullmq';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Job } from 'bullmq';
import type { DataSource } from 'typeorm';
import type { Logger } from 'pino';
import { HASHQ_LOGGER } from '@hashq/config';
import { benchQueueName, runBenchmark, saveRun, type BenchJobData, type BenchRequest, type Provider } from '@hashq/bench';

/**
 * Runs benchmark jobs of this worker's CPU architecture (queue bench-<process.arch>),
 * one at a time (a benchmark wants the machine to itself), and records them in PostgreSQL.
 */
@Processor(benchQueueName(), { concurrency: 1, lockDuration: 120_000 })
export class BenchmarkProcessor extends WorkerHost {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(HASHQ_LOGGER) private readonly log: Logger,
  ) {
    super();
  }

  async process(job: Job<BenchJobData>): Promise<{ status: string }> {
    const runId = job.data.runId;
    const log = this.log.child({ benchmarkId: runId });
    // TypeORM answers an UPDATE … RETURNING with [rows, affected]
    const [rows] = (await this.db.query(
      `UPDATE benchmark_runs SET status = 'running', started_at = now() WHERE id = $1 AND status IN ('queued', 'running') RETURNING request`,
      [runId],
    )) as [{ request: BenchRequest }[], number];
    const row = rows[0];
    if (!row) {
      log.info('benchmark is not queued: nothing to do');
      return { status: 'skipped' };
    }
    const request = row.request;
    log.info({ request }, 'benchmark started');
    try {
      const run = await runBenchmark({
        quick: request.quick,
        algorithms: request.algorithms,
        providers: request.implementations as Provider[] | undefined,
        lengths: request.lengths,
      });
      await saveRun(this.db, run, runId);
      log.info({ durationMs: run.durationMs, series: run.series.length }, 'benchmark finished');
      return { status: 'succeeded' };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      await this.db.query(
        `UPDATE benchmark_runs
            SET status = 'failed', error_code = 'BENCHMARK_FAILED', error_message = $2, finished_at = now()
          WHERE id = $1`,
        [runId, message],
      );
      log.error({ err: message }, 'benchmark failed');
      return { status: 'failed' };
    }
  }
}
