/**
 * The hashq API as a Nest app on a TestEnv, for supertest:
 *
 *   const env = await createTestEnv();
 *   const app = await createApiApp(env);
 *   await request(app.getHttpServer()).get('/health').expect(200);
 *   await app.close();  // before env.cleanup()
 */
import type { INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';

import { AppModule } from '../../apps/api/src/app.module';
import { configureApp } from '../../apps/api/src/app.setup';
import type { TestEnv } from './env';

export async function createApiApp(env: TestEnv): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [AppModule.forRoot({ env: env.env })],
  }).compile();
  const app = moduleRef.createNestApplication<NestExpressApplication>({
    logger: false,
    bodyParser: false,
  });
  configureApp(app);
  await app.init();
  return app;
}
