/**
 * PostgreSQL outage seen by the API: the API's database connections go through
 * a TCP proxy on 127.0.0.1 that the test cuts (established connections reset,
 * new ones refused) and restores. While it is cut the API answers
 * 503 DATABASE_UNAVAILABLE (never a 500, never a crash); afterwards it serves
 * again without a restart.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { createApiApp } from './helpers/api';
import { createTestEnv, type TestEnv } from './helpers/env';

describe('API during a PostgreSQL outage', () => {
  let env: TestEnv;
  let api: INestApplication;
  let proxy: Server | undefined;
  let port = 0;
  const sockets = new Set<Socket>();
  let target: URL;

  async function startProxy(): Promise<void> {
    proxy = createServer((client) => {
      const upstream = connect(Number(target.port || 5432), target.hostname);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => proxy!.listen(port, '127.0.0.1', resolve));
    port = (proxy!.address() as AddressInfo).port;
  }

  async function cutProxy(): Promise<void> {
    const closed = new Promise((resolve) => proxy!.close(resolve));
    for (const s of sockets) s.resetAndDestroy();
    await closed;
    proxy = undefined;
  }

  beforeAll(async () => {
    env = await createTestEnv();
    target = new URL(env.databaseUrl);
    await startProxy();
    const viaProxy = Object.assign(new URL(env.databaseUrl), { hostname: '127.0.0.1', port: String(port) }).toString();
    api = await createApiApp({ ...env, env: { ...env.env, DATABASE_URL: viaProxy } });
  });

  afterAll(async () => {
    if (!proxy) await startProxy().catch(() => undefined); // let the app close its pool cleanly
    await api?.close();
    await proxy?.close();
    await env?.cleanup();
  });

  it('answers 503 DATABASE_UNAVAILABLE while PostgreSQL is unreachable, then recovers', async () => {
    const http = request(api.getHttpServer());
    await http.get('/v1/jobs').expect(200);

    await cutProxy();
    for (const call of [
      () => http.get('/v1/jobs'),
      () => http.get('/v1/jobs/00000000-0000-4000-8000-000000000000'),
      () => http.post('/v1/jobs').send({ source: 's3://some-bucket/k', algorithms: ['sha256'] }),
    ]) {
      const res = await call();
      expect([res.status, res.body.error?.code]).toEqual([503, 'DATABASE_UNAVAILABLE']);
    }

    await startProxy(); // same port: PostgreSQL is back
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = (await http.get('/v1/jobs')).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(200);
    await http.post('/v1/jobs').send({ source: 's3://some-bucket/k', algorithms: ['sha256'] }).expect(202);
  });
});
