/**
 * The hashq API as a Nest app on a TestEnv, for supertest:
 *
 *   const env = await createTestEnv();
 *   const app = await createApiApp(env);
 *   await request(app.getHttpServer()).get('/health').expect(200);
 *   await app.close();  // before env.cleanup()
 */
import type { IncomingMessage } from 'node:http';

import type { DynamicModule, INestApplication, Type } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { Client } from 'pg';
import type { Logger } from 'pino';

import { AppModule } from '../../apps/api/src/app.module';
import { configureApp } from '../../apps/api/src/app.setup';
import { ExpressPrototypesAdapter } from '../../apps/api/src/common/express-adapter';
import { createTestEnv, type TestEnv } from './env';

export interface ApiAppOptions {
  /** The app's logger (e.g. one writing to a sink the test reads); default: LOG_LEVEL's. */
  logger?: Logger;
  /** Modules beside AppModule (e.g. a stand-in for the authentication guard). */
  imports?: Array<Type | DynamicModule>;
  /**
   * true (default): requests without an Authorization header get env's admin key, as a client
   * configured with that key would send it. false: requests go as they are (auth tests).
   */
  attachKey?: boolean;
}

export async function createApiApp(
  env: TestEnv,
  options: ApiAppOptions = {},
): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      AppModule.forRoot({ env: env.env, logger: options.logger }),
      ...(options.imports ?? []),
    ],
  }).compile();
  const app = moduleRef.createNestApplication<NestExpressApplication>(
    new ExpressPrototypesAdapter(),
    { logger: false, bodyParser: false },
  );
  if (options.attachKey ?? true) {
    app.use((req: IncomingMessage, _res: unknown, next: () => void) => {
      req.headers.authorization ??= env.auth.Authorization;
      next();
    });
  }
  configureApp(app);
  await app.init();
  return app;
}

/** A fresh TestEnv, the API on it and a client of its database; `close` ends all three. */
export interface ApiTestbed {
  env: TestEnv;
  app: INestApplication;
  db: Client;
  close(): Promise<void>;
}

export async function createApiTestbed(
  overrides: Record<string, string> = {},
): Promise<ApiTestbed> {
  const env = await createTestEnv(overrides);
  let app: INestApplication | undefined;
  const db = new Client({ connectionString: env.databaseUrl });
  const close = async () => {
    await db.end().catch(() => undefined);
    await app?.close();
    await env.cleanup();
  };
  try {
    app = await createApiApp(env);
    await db.connect();
    return { env, app, db, close };
  } catch (err) {
    await close();
    throw err;
  }
}
