import { createHash, getHashes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';

import { algorithms } from '@hashq/native';
import type { INestApplication } from '@nestjs/common';
import { Client } from 'pg';
import request from 'supertest';

import { createApiApp } from './helpers/api';
import { createTestEnv, type TestEnv } from './helpers/env';
import { samples } from './helpers/metrics';

/** A TCP port on which nothing listens (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('algorithms, health, metrics, docs (e2e)', () => {
  let env: TestEnv;
  let app: INestApplication;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    env = await createTestEnv();
    app = await createApiApp(env);
  });

  afterAll(async () => {
    await app?.close();
    await env?.cleanup();
  });

  it('GET /v1/algorithms lists the native library algorithms', async () => {
    const res = await http().get('/v1/algorithms').expect(200);
    const native = algorithms();
    expect(res.body.items.map((a: { name: string }) => a.name)).toEqual(native.map((a) => a.name));
    for (const item of res.body.items) {
      expect(Object.keys(item).sort()).toEqual(
        [
          'blockSize',
          'customizable',
          'digestLength',
          'implementation',
          'name',
          'standard',
          'xof',
        ].sort(),
      );
    }
    // Digest lengths of the algorithms Node's crypto also has must match it.
    const nodeHashes = new Set(getHashes());
    const common = res.body.items.filter(
      (a: { name: string; xof: boolean }) => nodeHashes.has(a.name) && !a.xof,
    );
    expect(common.map((a: { name: string }) => a.name)).toEqual(
      expect.arrayContaining(['sha1', 'sha256', 'sha512']),
    );
    for (const a of common) expect(a.digestLength).toBe(createHash(a.name).digest().length);
  });

  it('GET /health checks PostgreSQL and Redis for real', async () => {
    const res = await http().get('/health').expect(200);
    expect(res.body).toMatchObject({
      status: 'ok',
      checks: { postgres: { status: 'up' }, redis: { status: 'up' } },
    });
  });

  it('GET /metrics reports jobs by status, bytes and queue depth from PostgreSQL and BullMQ', async () => {
    const path = join(env.fileRoot, 'm.bin');
    await writeFile(path, Buffer.alloc(1000));
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await http()
        .post('/v1/jobs')
        .send({ source: { type: 'file', path }, algorithms: ['sha256'] })
        .expect(202);
      ids.push(res.body.id);
    }
    await http().post(`/v1/jobs/${ids[0]}/cancel`).expect(200);

    const res = await http().get('/metrics').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    const m = samples(res.text);
    expect(m.get('hashq_jobs{status="queued"}')).toBe(2);
    expect(m.get('hashq_jobs{status="canceled"}')).toBe(1);
    expect(m.get('hashq_jobs{status="succeeded"}')).toBe(0);
    expect(m.get('hashq_bytes_hashed')).toBe(0);
    expect(m.get('hashq_bytes_read')).toBe(0);
    expect(m.get('hashq_queue_jobs{state="waiting"}')).toBe(2);
    expect(m.get('hashq_queue_jobs{state="active"}')).toBe(0);
    expect(m.has('hashq_api_process_cpu_user_seconds_total')).toBe(true);
  });

  it('without Redis: /health is 503 naming it, a submit is still stored, /metrics still answers', async () => {
    const port = await closedPort();
    const broken = await createApiApp({
      ...env,
      env: { ...env.env, REDIS_URL: `redis://127.0.0.1:${port}` },
    });
    try {
      const res = await request(broken.getHttpServer()).get('/health').expect(503);
      expect(res.body.status).toBe('error');
      expect(res.body.checks.postgres.status).toBe('up');
      expect(res.body.checks.redis.status).toBe('down');
      expect(typeof res.body.checks.redis.error).toBe('string');

      // PostgreSQL is the truth: the job is accepted and stays queued until Redis is back
      const path = join(env.fileRoot, 'no-redis.bin');
      await writeFile(path, 'x');
      const job = await request(broken.getHttpServer())
        .post('/v1/jobs')
        .send({ source: { type: 'file', path }, algorithms: ['sha256'] })
        .expect(202);
      expect(job.body.status).toBe('queued');
      await request(app.getHttpServer()).get(`/v1/jobs/${job.body.id}`).expect(200);

      const metrics = await request(broken.getHttpServer()).get('/metrics').expect(200);
      const m = samples(metrics.text);
      expect(m.get('hashq_jobs{status="queued"}')).toBeGreaterThanOrEqual(1);
      expect([...m.keys()].some((key) => key.startsWith('hashq_queue_jobs{'))).toBe(false);
    } finally {
      await broken.close();
    }
  });

  it('keeps its tables in DATABASE_SCHEMA when that is not public', async () => {
    const custom = await createTestEnv({ DATABASE_SCHEMA: 'hq_custom' });
    const customApp = await createApiApp(custom);
    try {
      const path = join(custom.fileRoot, 'c.bin');
      await writeFile(path, 'abc');
      const res = await request(customApp.getHttpServer())
        .post('/v1/jobs')
        .send({ source: { type: 'file', path }, algorithms: ['sha256'] })
        .expect(202);
      await request(customApp.getHttpServer()).get(`/v1/jobs/${res.body.id}`).expect(200);
      const client = new Client({ connectionString: custom.databaseUrl });
      await client.connect();
      try {
        const { rows } = await client.query(
          `SELECT table_schema, table_name FROM information_schema.tables WHERE table_name IN ('jobs', 'job_states') ORDER BY 2`,
        );
        expect(rows).toEqual([
          { table_schema: 'hq_custom', table_name: 'job_states' },
          { table_schema: 'hq_custom', table_name: 'jobs' },
        ]);
        const count = await client.query('SELECT count(*)::int AS n FROM hq_custom.jobs');
        expect(count.rows[0].n).toBe(1);
      } finally {
        await client.end();
      }
    } finally {
      await customApp.close();
      await custom.cleanup();
    }
  });

  it('serves the OpenAPI page at /docs and its JSON at /docs/json', async () => {
    const page = await http().get('/docs').expect(200);
    expect(page.text).toContain('swagger');
    const spec = await http().get('/docs/json').expect(200);
    expect(Object.keys(spec.body.paths)).toEqual(
      expect.arrayContaining([
        '/v1/jobs',
        '/v1/jobs/{id}',
        '/v1/jobs/{id}/cancel',
        '/v1/algorithms',
        '/health',
        '/metrics',
      ]),
    );
  });
});
