import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { createRootLogger, NestPinoLogger } from './logger.js';
import { loadWorkerConfig } from './worker-config.js';
import { WorkerModule } from './worker.module.js';

async function bootstrap(): Promise<void> {
  const config = loadWorkerConfig();
  const log = createRootLogger(config.logLevel);
  const app = await NestFactory.createApplicationContext(WorkerModule.register(config, log), {
    logger: new NestPinoLogger(log),
  });
  // Nest runs the shutdown hooks (checkpoint + release) on these signals.
  app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      setTimeout(() => {
        log.error({ signal, timeoutMs: config.shutdownTimeoutMs }, 'shutdown took too long: exiting');
        process.exit(1);
      }, config.shutdownTimeoutMs).unref();
    });
  }
  log.info(
    {
      queuePrefix: config.queuePrefix,
      concurrency: config.concurrency,
      chunkBytes: config.chunkBytes,
      checkpointBytes: config.checkpointBytes,
      checkpointSeconds: config.checkpointSeconds,
    },
    'worker started',
  );
}

bootstrap().catch((err: unknown) => {
  // Config or connection errors at start: one JSON line, then a non-zero exit.
  process.stderr.write(`${JSON.stringify({ level: 'fatal', msg: 'worker failed to start', err: String(err) })}\n`);
  process.exit(1);
});
