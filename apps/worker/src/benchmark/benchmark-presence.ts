import { BenchmarkRepository } from '@hashq/bench';
import { HASHQ_CONFIG, HASHQ_LOGGER, type HashqConfig } from '@hashq/config';
import { PeriodicTask } from '@hashq/jobs';
import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';

/**
 * Tells the API that a benchmark worker of this architecture is alive: benchmark_workers.seen_at,
 * four times per BENCHMARK_WORKER_TIMEOUT_SECONDS. Without it the API refuses runs for the
 * architecture and expires the queued ones (BENCHMARK_NO_WORKER).
 */
@Injectable()
export class BenchmarkPresence extends PeriodicTask {
  protected readonly runAtBootstrap = true;

  constructor(
    private readonly runs: BenchmarkRepository,
    @Inject(HASHQ_CONFIG) private readonly config: HashqConfig,
    @Inject(HASHQ_LOGGER) logger: Logger,
  ) {
    super(logger);
  }

  protected periodMs(): number {
    return (this.config.benchmarkWorkerTimeoutSeconds * 1000) / 4;
  }

  protected run(): Promise<void> {
    return this.runs.recordWorker(process.arch);
  }

  protected failure(): { message: string; fields: object } {
    return { message: 'could not record the benchmark worker', fields: { arch: process.arch } };
  }
}
