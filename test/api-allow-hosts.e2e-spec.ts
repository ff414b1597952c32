/**
 * The SSRF allow list (HASHQ_ALLOW_HOSTS) comes from the API's validated configuration, i.e. the
 * env given to AppModule.forRoot (which overrides process.env), like every other setting
 * (invalid entries are refused at start: libs/config/src/config.spec.ts).
 */
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';

import { createApiApp } from './helpers/api';
import { createTestEnv, type TestEnv } from './helpers/env';

describe('API: HASHQ_ALLOW_HOSTS from the configuration', () => {
  let env: TestEnv;
  const apps: INestApplication[] = [];
  const saved = process.env.HASHQ_ALLOW_HOSTS;

  beforeAll(async () => {
    env = await createTestEnv();
  });

  afterAll(async () => {
    for (const app of apps) await app.close();
    await env?.cleanup();
    if (saved === undefined) delete process.env.HASHQ_ALLOW_HOSTS;
    else process.env.HASHQ_ALLOW_HOSTS = saved;
  });

  const submit = (app: INestApplication, url: string) =>
    request(app.getHttpServer())
      .post('/v1/jobs')
      .send({ source: url, algorithms: ['sha256'] });

  it('allows what the given configuration allows, whatever process.env says', async () => {
    delete process.env.HASHQ_ALLOW_HOSTS;
    const allowing = await createApiApp({
      ...env,
      env: { ...env.env, HASHQ_ALLOW_HOSTS: '127.0.0.1, 10.9.0.0/16' },
    });
    apps.push(allowing);
    await submit(allowing, 'http://127.0.0.1:9/a').expect(202);
    await submit(allowing, 'http://10.9.8.7/b').expect(202);
    const other = await submit(allowing, 'http://10.10.0.1/c').expect(403);
    expect(other.body.error.code).toBe('SOURCE_ADDRESS_FORBIDDEN');

    process.env.HASHQ_ALLOW_HOSTS = '127.0.0.1'; // the app's own configuration says otherwise
    const refusing = await createApiApp({ ...env, env: { ...env.env, HASHQ_ALLOW_HOSTS: '' } });
    apps.push(refusing);
    const refused = await submit(refusing, 'http://127.0.0.1:9/a').expect(403);
    expect(refused.body.error.code).toBe('SOURCE_ADDRESS_FORBIDDEN');
  });
});
