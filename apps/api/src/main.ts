import 'reflect-metadata';

import { createLogger, loadConfig, logFatal, PinoNestLogger } from '@hashq/config';
import { retainFreedHeap } from '@hashq/native';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';

import { raiseLoopPriority, realtimeLoop } from './common/loop-priority';

async function bootstrap(): Promise<void> {
  const config = loadConfig();
  // Before the application's modules load: one of them (msgpackr's addon, through BullMQ) starts
  // libuv's pool, whose threads inherit the event loop's priority only if they start after it.
  // (realtime: this first, the real-time policy once the API listens and its threads exist)
  const priority = config.apiLoopPriority === 'normal' ? undefined : raiseLoopPriority();
  // A digest session's body arrives as 64 KiB buffers that V8 frees in batches; glibc would give
  // their pages back and fault them in again (docs/digest-sessions.md, "The API's own page faults").
  const heapRetained = config.apiHeapRetainBytes > 0 && retainFreedHeap(config.apiHeapRetainBytes);
  const logger = createLogger('api', config.logLevel);
  if (priority?.refused) {
    logger.info(
      { priority },
      'event loop priority unchanged: raising it needs root or CAP_SYS_NICE (API_LOOP_PRIORITY)',
    );
  }
  const [{ AppModule }, { configureApp }, { ExpressPrototypesAdapter }] = await Promise.all([
    import('./app.module.js'),
    import('./app.setup.js'),
    import('./common/express-adapter.js'),
  ]);
  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.forRoot({ logger }),
    new ExpressPrototypesAdapter(),
    {
      logger: new PinoNestLogger(logger),
      bodyParser: false, // configureApp adds the JSON parser, the only one
    },
  );
  configureApp(app);
  // HOST '' = every interface (Node's default); HASHQ_AUTH=off was refused above unless loopback
  await (config.host ? app.listen(config.port, config.host) : app.listen(config.port));
  const realtime = config.apiLoopPriority === 'realtime' ? realtimeLoop() : undefined;
  if (realtime?.refused) {
    logger.info(
      { realtime },
      'event loop not in real time: SCHED_FIFO needs root, CAP_SYS_NICE or RLIMIT_RTPRIO (API_LOOP_PRIORITY)',
    );
  }
  const url = await app.getUrl();
  const loopFifoThreads = realtime?.refused ? undefined : realtime?.threads;
  logger.info(
    {
      url,
      docs: `${url}/docs`,
      auth: config.auth,
      loopNice: priority?.nice,
      loopFifoThreads,
      heapRetained,
    },
    'hashq api listening',
  );
}

bootstrap().catch((err: unknown) => {
  logFatal('api', 'api failed to start', err);
  process.exit(1);
});
