import { HASH_QUEUE, JobsRepository, METRIC_NAMES, withTimeout } from '@hashq/jobs';
import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';

const REDIS_TIMEOUT_MS = 2000;

/** BullMQ states reported as queue depth. */
const QUEUE_STATES = [
  'waiting',
  'prioritized',
  'active',
  'delayed',
  'failed',
  'completed',
] as const;

/**
 * Prometheus metrics of the API process. Job figures are read from PostgreSQL at scrape time, so
 * every API replica reports the same truth; the checkpoint latency histogram
 * (hashq_checkpoint_duration_seconds) is observed by the workers where checkpoints happen.
 * Without Redis the scrape still answers, without the queue depth.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  constructor(jobs: JobsRepository, @InjectQueue(HASH_QUEUE) queue: Queue) {
    collectDefaultMetrics({ register: this.registry, prefix: 'hashq_api_' });

    new Gauge({
      name: METRIC_NAMES.jobsByStatus,
      help: 'Jobs by status (PostgreSQL)',
      labelNames: ['status'],
      registers: [this.registry],
      async collect() {
        const counts = await jobs.countByStatus();
        for (const [status, count] of Object.entries(counts)) this.set({ status }, count);
      },
    });

    const totals = () => jobs.byteTotals();
    new Gauge({
      name: METRIC_NAMES.bytesHashed,
      help: 'Bytes hashed over all jobs (sum of bytes_done, PostgreSQL)',
      registers: [this.registry],
      async collect() {
        this.set((await totals()).bytesDone);
      },
    });
    new Gauge({
      name: METRIC_NAMES.bytesRead,
      help: 'Bytes read over all jobs, re-reads after crashes included (sum of bytes_read, PostgreSQL)',
      registers: [this.registry],
      async collect() {
        this.set((await totals()).bytesRead);
      },
    });

    new Gauge({
      name: METRIC_NAMES.queueDepth,
      help: 'BullMQ hash queue jobs by state (Redis; a job group counts once); absent while Redis does not answer',
      labelNames: ['state'],
      registers: [this.registry],
      async collect() {
        try {
          const counts = await withTimeout(
            queue.getJobCounts(...QUEUE_STATES),
            REDIS_TIMEOUT_MS,
            'redis',
          );
          for (const state of QUEUE_STATES) this.set({ state }, counts[state] ?? 0);
        } catch {
          this.reset();
        }
      },
    });
  }

  metrics(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
