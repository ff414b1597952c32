import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { HASHQ_CONFIG, HASHQ_LOGGER, type HashqConfig } from '@hashq/config';
import { CHECKPOINT_BUCKETS, METRIC_NAMES } from '@hashq/jobs';
import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/** What a hash run reports while it works (the worker's own figures; the API reports PostgreSQL's). */
export interface RunMetrics {
  /** One fenced checkpoint write (offset + states), in seconds. */
  checkpointSaved(seconds: number): void;
  /** Bytes fed to the hashers of a job (each byte once, whatever the number of algorithms). */
  bytesHashed(bytes: number): void;
}

/**
 * Prometheus metrics of one worker process, served by a small node:http server on
 * WORKER_METRICS_PORT (GET /metrics; 0 disables the server, the metrics are still kept).
 * A port that is taken is logged, never fatal: hashing matters more than scraping.
 */
@Injectable()
export class WorkerMetrics implements RunMetrics, OnModuleInit, OnApplicationShutdown {
  readonly registry = new Registry();
  private readonly checkpointSeconds: Histogram;
  private readonly hashed: Counter;
  private server?: Server;

  constructor(
    @Inject(HASHQ_CONFIG) private readonly config: HashqConfig,
    @Inject(HASHQ_LOGGER) private readonly log: Logger,
  ) {
    collectDefaultMetrics({ register: this.registry, prefix: 'hashq_worker_' });
    this.checkpointSeconds = new Histogram({
      name: METRIC_NAMES.checkpointSeconds,
      help: 'Duration of one fenced checkpoint write (job offset + serialized states) in seconds',
      buckets: CHECKPOINT_BUCKETS,
      registers: [this.registry],
    });
    this.hashed = new Counter({
      name: METRIC_NAMES.workerBytesHashed,
      help: 'Bytes hashed by this worker process (re-reads after a crash included)',
      registers: [this.registry],
    });
  }

  checkpointSaved(seconds: number): void {
    this.checkpointSeconds.observe(seconds);
  }

  bytesHashed(bytes: number): void {
    if (bytes > 0) this.hashed.inc(bytes);
  }

  /** The port the endpoint listens on, when it does. */
  get port(): number | undefined {
    const address = this.server?.address();
    return address && typeof address === 'object' ? (address as AddressInfo).port : undefined;
  }

  async onModuleInit(): Promise<void> {
    const port = this.config.workerMetricsPort;
    if (port === 0) return;
    const server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (req.method !== 'GET' || path !== '/metrics') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
        return;
      }
      this.registry.metrics().then(
        (body) => res.writeHead(200, { 'content-type': this.registry.contentType }).end(body),
        (err: Error) =>
          res.writeHead(500, { 'content-type': 'text/plain' }).end(`${err.message}\n`),
      );
    });
    await new Promise<void>((resolve) => {
      server.once('error', (err: NodeJS.ErrnoException) => {
        this.log.warn(
          { port, err: { message: err.message, code: err.code } },
          'metrics endpoint not started',
        );
        resolve();
      });
      server.listen(port, () => {
        this.server = server;
        this.log.info({ port }, 'metrics endpoint listening');
        resolve();
      });
    });
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
