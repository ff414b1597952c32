import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { loadConfig, PinoNestLogger } from '@hashq/config';
import { algorithms } from '@hashq/native';
import { createWorkerLogger } from './logger.js';
import { loadWorkerSettings } from './worker-config.js';
import { WorkerModule } from './worker.module.js';

async function bootstrap(): Promise<void> {
  const config = loadConfig();
  const settings = loadWorkerSettings();
  const log = createWorkerLogger(config.logLevel);
  const app = await NestFactory.createApplicationContext(WorkerModule.register(settings, log), {
    logger: new PinoNestLogger(log),
  });
  // Nest runs the shutdown hooks (checkpoint + hand-back, then close) on these signals.
  app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      setTimeout(() => {
        log.error({ signal, timeoutMs: settings.shutdownTimeoutMs }, 'shutdown took too long: exiting');
        process.exit(1);
      }, settings.shutdownTimeoutMs).unref();
    });
  }
  log.info(
    {
      queuePrefix: config.queuePrefix,
      concurrency: config.workerConcurrency,
      chunkBytes: config.chunkBytes,
      checkpointBytes: config.checkpointBytes,
      checkpointSeconds: config.checkpointSeconds,
      reconcileSeconds: config.reconcileSeconds,
      ...settings,
      // the code path each algorithm dispatched to on this CPU (e.g. sha-ni, portable)
      implementations: Object.fromEntries(algorithms().map((algorithm) => [algorithm.name, algorithm.implementation])),
    },
    'worker started',
  );
}

bootstrap().catch((err: unknown) => {
  // Configuration or connection errors at start: one JSON line, then a non-zero exit.
  process.stderr.write(`${JSON.stringify({ level: 60, service: 'worker', msg: 'worker failed to start', err: String(err) })}\n`);
  process.exit(1);
});
