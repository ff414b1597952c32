/**
 * Redis outage: the API and a worker use a PRIVATE redis-server started by this test
 * (random loopback port, nothing on disk). The server is killed: every BullMQ key is gone. While
 * it is down the API still accepts jobs (202: they are in PostgreSQL). It is started again on the
 * same port, empty: the API's reconciler (RECONCILE_SECONDS=1; the worker's own rounds are set to
 * once an hour here, so the API's are the ones tested) enqueues them, the worker reconnects by
 * itself, and every job succeeds with the digest of Node's crypto, finished once.
 * The app and the worker are closed properly afterwards: Jest must exit without --forceExit.
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { HASH_QUEUE } from '@hashq/jobs';
import type { INestApplication } from '@nestjs/common';
import { Queue } from 'bullmq';
import request from 'supertest';

import { createApiApp } from './helpers/api';
import { createTestEnv, type TestEnv } from './helpers/env';
import { PrivateRedis } from './helpers/redis-server';
import { fileDigest, type LogLine, MiB, WorkerProcess } from './helpers/worker-process';

describe('Redis outage: API and worker on a private redis-server', () => {
  const redis = new PrivateRedis();
  let env: TestEnv;
  let api: INestApplication | undefined;
  let worker: WorkerProcess | undefined;

  beforeAll(async () => {
    await redis.start();
    env = await createTestEnv({ REDIS_URL: redis.url, RECONCILE_SECONDS: '1' });
    api = await createApiApp(env);
    worker = new WorkerProcess({
      ...env.env,
      LOG_LEVEL: 'info',
      WORKER_METRICS_PORT: '0',
      RECONCILE_SECONDS: '3600',
      CHUNK_BYTES: String(1 * MiB),
      CHECKPOINT_BYTES: String(2 * MiB),
    });
    await worker.waitForLog((line) => line.msg === 'worker started', 30_000);
  });

  afterAll(async () => {
    if (!redis.running) await redis.start().catch(() => undefined);
    await worker?.stop();
    await api?.close();
    await env?.cleanup();
    await redis.dispose();
  });

  const finished = (id: string) => (line: LogLine) => line.jobId === id && line.msg === 'finished';

  async function file(name: string, mib: number): Promise<string> {
    const path = join(env.fileRoot, name);
    await writeFile(path, randomBytes(mib * MiB));
    return path;
  }

  async function waitDone(id: string, timeoutMs = 60_000) {
    const http = request(api!.getHttpServer());
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const res = await http.get(`/v1/jobs/${id}`).expect(200);
      if (!['queued', 'running'].includes(res.body.status)) return res.body;
      if (Date.now() > deadline)
        throw new Error(`job ${id} still ${res.body.status}\n${worker!.tail()}`);
      if (!worker!.running) throw new Error(`worker exited\n${worker!.tail()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('accepts jobs while Redis is down; they run once it is back, on the same worker', async () => {
    const http = request(api!.getHttpServer());
    const submit = (path: string) =>
      http.post('/v1/jobs').send({ source: { type: 'file', path }, algorithms: ['sha256'] });

    // Before: the pipeline works.
    const firstPath = await file('before.bin', 3);
    const first = (await submit(firstPath).expect(202)).body;
    expect((await waitDone(first.id)).digests.sha256.hex).toBe(
      await fileDigest('sha256', firstPath),
    );

    await redis.stop(); // every key is gone with it
    const paths: string[] = [];
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      paths.push(await file(`during-${i}.bin`, 3));
      const accepted = await submit(paths[i]).expect(202);
      expect(accepted.body.status).toBe('queued');
      ids.push(accepted.body.id);
    }
    for (const id of ids)
      expect((await http.get(`/v1/jobs/${id}`).expect(200)).body.status).toBe('queued');

    await redis.start(); // same port, empty
    const queue = new Queue(HASH_QUEUE, {
      connection: { url: redis.url },
      prefix: env.queuePrefix,
    });
    try {
      expect(await queue.getJob(first.id)).toBeUndefined(); // the server really lost everything (a finished job is never re-added)
    } finally {
      await queue.close();
    }
    for (const [i, id] of ids.entries()) {
      const job = await waitDone(id);
      expect([id, job.status, job.digests?.sha256.hex]).toEqual([
        id,
        'succeeded',
        await fileDigest('sha256', paths[i]),
      ]);
      expect([id, worker!.lines.filter(finished(id)).length]).toEqual([id, 1]);
    }
    expect(worker!.running).toBe(true); // the same process, reconnected
  }, 120_000);
});
