import {
  type BenchmarkJobData,
  benchmarkQueueName,
  BenchmarkRepository,
  type Provider,
  runBenchmark,
} from '@hashq/bench';
import { HASHQ_LOGGER } from '@hashq/config';
import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject } from '@nestjs/common';
import type { Job } from 'bullmq';
import type { Logger } from 'pino';

/**
 * Runs benchmark jobs of this worker's CPU architecture (queue bench-<process.arch>),
 * one at a time (a benchmark wants the machine to itself), and records them in PostgreSQL.
 */
@Processor(benchmarkQueueName(), { concurrency: 1, lockDuration: 120_000 })
export class BenchmarkProcessor extends WorkerHost {
  constructor(
    private readonly runs: BenchmarkRepository,
    @Inject(HASHQ_LOGGER) private readonly log: Logger,
  ) {
    super();
  }

  async process(job: Job<BenchmarkJobData>): Promise<{ status: string }> {
    const runId = job.data.runId;
    const log = this.log.child({ benchmarkId: runId });
    const request = await this.runs.start(runId);
    if (!request) {
      log.info('benchmark is not queued: nothing to do');
      return { status: 'skipped' };
    }
    log.info({ request }, 'benchmark started');
    try {
      const run = await runBenchmark({
        quick: request.quick,
        algorithms: request.algorithms,
        providers: request.implementations as Provider[] | undefined,
        lengths: request.lengths,
      });
      await this.runs.saveRun(run, runId);
      log.info({ durationMs: run.durationMs, series: run.series.length }, 'benchmark finished');
      return { status: 'succeeded' };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      await this.runs.fail(runId, message);
      log.error({ err: message }, 'benchmark failed');
      return { status: 'failed' };
    }
  }
}
