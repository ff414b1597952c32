/**
 * Outages seen by the API, through TCP proxies that the test cuts and restores.
 *
 * PostgreSQL: the API's database connections go through
 * a TCP proxy on 127.0.0.1 that the test cuts (established connections reset,
 * new ones refused) and restores. While it is cut the API answers
 * 503 DATABASE_UNAVAILABLE (never a 500, never a crash); afterwards it serves
 * again without a restart.
 * (The Redis outage is test/api-redis-outage.e2e-spec.ts.)
 */
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';

import { createApiApp } from './helpers/api';
import { createTestEnv, type TestEnv } from './helpers/env';
import { TcpProxy } from './helpers/tcp-proxy';

describe('API during a PostgreSQL outage', () => {
  let env: TestEnv;
  let api: INestApplication;
  let proxy: TcpProxy;

  beforeAll(async () => {
    env = await createTestEnv();
    const target = new URL(env.databaseUrl);
    proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    await proxy.start();
    const viaProxy = Object.assign(new URL(env.databaseUrl), {
      hostname: '127.0.0.1',
      port: String(proxy.port),
    }).toString();
    api = await createApiApp({ ...env, env: { ...env.env, DATABASE_URL: viaProxy } });
  });

  afterAll(async () => {
    if (proxy && !proxy.up) await proxy.start().catch(() => undefined); // let the app close its pool cleanly
    await api?.close();
    await proxy?.cut();
    await env?.cleanup();
  });

  it('answers 503 DATABASE_UNAVAILABLE while PostgreSQL is unreachable, then recovers', async () => {
    const http = request(api.getHttpServer());
    await http.get('/v1/jobs').expect(200);

    await proxy.cut();
    for (const call of [
      () => http.get('/v1/jobs'),
      () => http.get('/v1/jobs/00000000-0000-4000-8000-000000000000'),
      () => http.post('/v1/jobs').send({ source: 's3://some-bucket/k', algorithms: ['sha256'] }),
    ]) {
      const res = await call();
      expect([res.status, res.body.error?.code]).toEqual([503, 'DATABASE_UNAVAILABLE']);
    }

    await proxy.start(); // same port: PostgreSQL is back
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = (await http.get('/v1/jobs')).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(200);
    await http
      .post('/v1/jobs')
      .send({ source: 's3://some-bucket/k', algorithms: ['sha256'] })
      .expect(202);
  });
});
