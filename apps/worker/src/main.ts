import 'reflect-metadata';

import { setFlagsFromString } from 'node:v8';

import { createLogger, loadConfig, logFatal, PinoNestLogger } from '@hashq/config';
import { algorithms, setPoolIdle } from '@hashq/native';
import { NestFactory } from '@nestjs/core';

import { WorkerModule } from './worker.module';

// A full GC once the old space has grown by 150 % over what the last one kept. V8's default on a
// machine with GiBs of memory is up to 4x: a batch worker then carries ~60 MiB of dead promoted
// rows and buffers, and its peak grows with the batch. Below ~30 MB of room, V8 marks again right
// after each full GC while Buffers churn (an S3 batch's bodies): 70+ full GCs per 10k objects at
// 60 % (docs/batches.md, "Memory"). A flag given on the command line wins.
if (!process.execArgv.some((arg) => arg.startsWith('--heap-growing-percent'))) {
  setFlagsFromString('--heap-growing-percent=150');
}

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
