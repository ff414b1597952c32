/**
 * The crash-loop cap (MAX_JOB_ATTEMPTS): a job that has taken that many leases ends 'failed' with
 * ATTEMPTS_EXHAUSTED, its last checkpoint offset on record and its hash states deleted, instead of
 * running again.
 * - Real crashes: with a cap of 2, a worker SIGKILLed mid-job twice (an HTTP source on 127.0.0.1
 *   that serves slowly, so each kill lands mid-body); the third worker does not read the source
 *   again and the API shows the job failed with ATTEMPTS_EXHAUSTED.
 * - The reconciler: a job PostgreSQL calls running with a dead lease and no BullMQ job is not
 *   re-enqueued when it has used its attempts (it is failed instead); one with an attempt left is
 *   re-enqueued and succeeds with Node's digest.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { INestApplication } from '@nestjs/common';
import request from 'supertest';

import { createApiApp } from './helpers/api';
import { deleteRedisKeys } from './helpers/env';
import { fileDigest, isCheckpoint, MiB, WorkerTestEnv } from './helpers/worker-process';

const isFinished = (job: { status: string }) => job.status !== 'queued' && job.status !== 'running';

describe('MAX_JOB_ATTEMPTS: a worker killed on every attempt', () => {
  const env = new WorkerTestEnv();
  const SIZE = 48 * MiB;
  const data = randomBytes(SIZE);
  const gets: string[] = [];
  let server: Server;
  let api: INestApplication;
  const settings = {
    CHUNK_BYTES: String(1 * MiB),
    CHECKPOINT_BYTES: String(2 * MiB),
    CHECKPOINT_SECONDS: '3600',
    HASHQ_ALLOW_HOSTS: '127.0.0.1',
    MAX_JOB_ATTEMPTS: '2',
    RECONCILE_SECONDS: '1',
  };

  beforeAll(async () => {
    const etag = `"${createHash('md5').update(data).digest('hex')}"`;
    // Ranged, 8 MiB/s: a kill after a checkpoint always lands mid-body.
    server = createServer((req, res) => {
      const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
      const start = range ? Number(range[1]) : 0;
      if (req.method === 'GET') gets.push(req.headers.range ?? 'all');
      res.writeHead(range ? 206 : 200, {
        'content-length': SIZE - start,
        etag,
        'accept-ranges': 'bytes',
        ...(range ? { 'content-range': `bytes ${start}-${SIZE - 1}/${SIZE}` } : {}),
      });
      if (req.method === 'HEAD') return void res.end();
      let at = start;
      let closed = false;
      res.on('close', () => (closed = true));
      const pump = () => {
        if (closed) return;
        if (at >= SIZE) return void res.end();
        const piece = data.subarray(at, Math.min(SIZE, at + 256 * 1024));
        at += piece.length;
        res.write(piece);
        setTimeout(pump, 31); // ~8 MiB/s
      };
      pump();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    await env.setUp();
    api = await createApiApp({
      ...env.env,
      env: { ...env.env.env, HASHQ_ALLOW_HOSTS: '127.0.0.1', MAX_JOB_ATTEMPTS: '2' },
    });
  });

  afterAll(async () => {
    await api?.close();
    await env.tearDown();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('ends the job ATTEMPTS_EXHAUSTED (checkpoint offset kept, states deleted) instead of a third run', async () => {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/loop.bin`;
    const http = request(api.getHttpServer());
    const id = (
      await http
        .post('/v1/jobs')
        .send({ source: url, algorithms: ['sha256'] })
        .expect(202)
    ).body.id as string;

    let lastOffset = 0;
    for (let attempt = 1; attempt <= 2; attempt++) {
      const worker = env.startWorker(settings);
      await worker.waitForLog(
        (line) => line.jobId === id && isCheckpoint(lastOffset + 2 * MiB)(line),
        60_000,
      );
      worker.kill('SIGKILL');
      await worker.exited;
      await env.waitForWorkerSessionsGone();
      const crashed = await env.job(id);
      expect([crashed.status, crashed.attempts]).toEqual(['running', attempt]);
      expect(crashed.checkpoint_offset).toBeGreaterThan(lastOffset);
      lastOffset = crashed.checkpoint_offset;
    }
    expect([...(await env.states(id)).keys()]).toEqual(['sha256']);
    const getsBefore = gets.length;

    const third = env.startWorker(settings);
    const done = await env.waitForJob(id, isFinished, third, 60_000);
    await third.waitForLog(
      (line) => line.jobId === id && line.msg === 'job failed: ATTEMPTS_EXHAUSTED',
    );
    expect(done.status).toBe('failed');
    expect(done.error_code).toBe('ATTEMPTS_EXHAUSTED');
    expect(done.attempts).toBe(2); // the refused lease is not an attempt
    expect(done.checkpoint_offset).toBe(lastOffset);
    expect(done.bytes_done).toBe(lastOffset);
    expect(done.digests).toBeNull();
    expect((await env.states(id)).size).toBe(0); // a job that ends keeps no state
    expect(gets.length).toBe(getsBefore); // the source was not read again
    expect(third.lines.some((line) => line.jobId === id && line.msg === 'starting')).toBe(false);

    const shown = await http.get(`/v1/jobs/${id}`).expect(200);
    expect(shown.body.status).toBe('failed');
    expect(shown.body.error.code).toBe('ATTEMPTS_EXHAUSTED');
    expect(shown.body.error.details).toEqual({
      attempts: 2,
      maxAttempts: 2,
      checkpointOffset: lastOffset,
      lastErrorCode: null,
    });

    // Nothing brings it back: the worker's reconciler rounds (RECONCILE_SECONDS=1) leave it alone.
    // BullMQ completes the job just after the worker's log line; until then it is active and locked,
    // and remove() throws ('locked by another worker'): wait for that instead of racing it.
    const deadline = Date.now() + 10_000;
    for (;;) {
      const bull = await env.queue.getJob(id);
      const state = bull ? await bull.getState() : 'gone';
      if (state === 'completed' || state === 'failed' || state === 'gone') break;
      if (Date.now() > deadline) throw new Error(`BullMQ job ${id} still ${state}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    await env.queue.getJob(id).then((job) => job?.remove());
    await new Promise((r) => setTimeout(r, 2500));
    expect((await env.job(id)).fence).toBe(done.fence);
    expect(await env.queue.getJob(id)).toBeUndefined();
    await third.stop();
  }, 180_000);
});

describe('MAX_JOB_ATTEMPTS: the reconciler does not re-enqueue a job that used its attempts', () => {
  const env = new WorkerTestEnv();
  afterAll(() => env.tearDown());

  it('fails the capped job (API shows ATTEMPTS_EXHAUSTED) and re-enqueues the one below the cap', async () => {
    await env.setUp();
    const path = await env.createFile('c.bin', 3);
    const capped = await env.submit(path, ['sha256']);
    const below = await env.submit(path, ['sha256']);
    // Both were running on a worker that died (lease expired); Redis lost their BullMQ jobs.
    for (const [id, attempts] of [
      [capped, 3],
      [below, 2],
    ] as const) {
      await env.db.query(
        `UPDATE jobs SET status = 'running', fence = $2::int, attempts = $2::int, lease_owner = 'dead',
                lease_expires_at = now() - interval '1 second' WHERE id = $1`,
        [id, attempts],
      );
    }
    // The capped one has a checkpoint on record: its offset must survive, its states must go.
    await env.db.query(
      `UPDATE jobs SET checkpoint_offset = 1048576, bytes_done = 2097152 WHERE id = $1`,
      [capped],
    );
    await env.db.query(
      `INSERT INTO job_states (job_id, algorithm, state) VALUES ($1, 'sha256', '\\x0102')`,
      [capped],
    );
    await deleteRedisKeys(env.env.redisUrl, env.env.queuePrefix);

    // The API's reconciler runs one round at start.
    const api = await createApiApp({ ...env.env, env: { ...env.env.env, MAX_JOB_ATTEMPTS: '3' } });
    try {
      const http = request(api.getHttpServer());
      for (let i = 0; i < 100 && (await env.queue.getJob(below)) === undefined; i++)
        await new Promise((r) => setTimeout(r, 100));
      expect(await env.queue.getJob(below)).toBeDefined();
      expect(await env.queue.getJob(capped)).toBeUndefined();
      const shown = await http.get(`/v1/jobs/${capped}`).expect(200);
      expect([shown.body.status, shown.body.error?.code]).toEqual(['failed', 'ATTEMPTS_EXHAUSTED']);
      expect(shown.body.error.details).toEqual({
        attempts: 3,
        maxAttempts: 3,
        checkpointOffset: 1048576,
        lastErrorCode: null,
      });
      const row = await env.job(capped);
      expect([row.fence, row.checkpoint_offset, row.bytes_done]).toEqual([4, 1048576, 1048576]);
      expect((await env.states(capped)).size).toBe(0);

      const worker = env.startWorker({ MAX_JOB_ATTEMPTS: '3' });
      const done = await env.waitForJob(below, isFinished, worker, 60_000);
      expect([done.status, done.attempts, done.digests?.sha256.hex]).toEqual([
        'succeeded',
        3,
        await fileDigest('sha256', path),
      ]);
      expect((await env.job(capped)).fence).toBe(4);
      await worker.stop();
    } finally {
      await api.close();
    }
  }, 120_000);
});
