import { BenchmarkRepository } from '@hashq/bench';
import { HASHQ_CONFIG, HASHQ_LOGGER, type HashqConfig } from '@hashq/config';
import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import type { Logger } from 'pino';

/**
 * Tells the API that a benchmark worker of this architecture is alive: benchmark_workers.seen_at,
 * four times per BENCHMARK_WORKER_TIMEOUT_SECONDS. Without it the API refuses runs for the
 * architecture and expires the queued ones (BENCHMARK_NO_WORKER).
 */
@Injectable()
export class BenchmarkPresence implements OnApplicationBootstrap, OnModuleDestroy {
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly runs: BenchmarkRepository,
    @Inject(HASHQ_CONFIG) private readonly config: HashqConfig,
    @Inject(HASHQ_LOGGER) private readonly log: Logger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.report();
    this.timer = setInterval(
      () => void this.report(),
      (this.config.benchmarkWorkerTimeoutSeconds * 1000) / 4,
    );
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  private async report(): Promise<void> {
    try {
      await this.runs.recordWorker(process.arch);
    } catch (err) {
      this.log.warn(
        { arch: process.arch, err: (err as Error).message },
        'could not record the benchmark worker',
      );
    }
  }
}
