import 'reflect-metadata';

import { createLogger, loadConfig, logFatal, PinoNestLogger } from '@hashq/config';
import { algorithms, setPoolIdle } from '@hashq/native';
import { NestFactory } from '@nestjs/core';

import { initHeapGrowing } from './heap-room';
import { WorkerModule } from './worker.module';

initHeapGrowing();

async function bootstrap(): Promise<void> {
  const config = loadConfig();
  const settings = config.worker;
  const log = createLogger('worker', config.logLevel);
  // Hashing is background work: on a shared host it must not delay the threads that feed it (a
  // source's server, the API, PostgreSQL). Each pool thread moves when it next hashes.
  const hashThreadsIdle = settings.hashPriority === 'idle' && setPoolIdle();
  const app = await NestFactory.createApplicationContext(WorkerModule.register(log), {
    logger: new PinoNestLogger(log),
  });
  // Nest runs the shutdown hooks (checkpoint + hand-back, then close) on these signals.
  app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      setTimeout(() => {
        log.error(
          { signal, timeoutMs: settings.shutdownTimeoutMs },
          'shutdown took too long: exiting',
        );
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
      stateKeyIds: config.stateKeys.map((key) => key.id), // the first seals new checkpoints
      ...settings,
      hashThreadsIdle,
      // the code path each algorithm dispatched to on this CPU (e.g. sha-ni, portable)
      implementations: Object.fromEntries(
        algorithms().map((algorithm) => [algorithm.name, algorithm.implementation]),
      ),
    },
    'worker started',
  );
}

bootstrap().catch((err: unknown) => {
  // Configuration or connection errors at start: one line on stderr, then a non-zero exit.
  logFatal('worker', 'worker failed to start', err);
  process.exit(1);
});
