import 'reflect-metadata';

import { createLogger, loadConfig, logFatal, PinoNestLogger } from '@hashq/config';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';

import { AppModule } from './app.module';
import { configureApp } from './app.setup';
import { ExpressPrototypesAdapter } from './common/express-adapter';

async function bootstrap(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('api', config.logLevel);
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
  const url = await app.getUrl();
  logger.info({ url, docs: `${url}/docs`, auth: config.auth }, 'hashq api listening');
}

bootstrap().catch((err: unknown) => {
  logFatal('api', 'api failed to start', err);
  process.exit(1);
});
