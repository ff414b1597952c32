import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { HASH_QUEUE, JobQueueReconciler } from '@hashq/jobs';
import type { INestApplication } from '@nestjs/common';
import { Queue } from 'bullmq';
import { Client } from 'pg';
import request from 'supertest';

import { createApiApp } from './helpers/api';
import { createTestEnv, type TestEnv } from './helpers/env';

describe('jobs API (e2e, real PostgreSQL + Redis)', () => {
  let env: TestEnv;
  let app: INestApplication;
  let queue: Queue;
  let db: Client;
  let filePath: string;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    env = await createTestEnv();
    app = await createApiApp(env);
    queue = new Queue(HASH_QUEUE, { connection: { url: env.redisUrl }, prefix: env.queuePrefix });
    db = new Client({ connectionString: env.databaseUrl });
    await db.connect();
    filePath = join(env.fileRoot, 'hello.txt');
    await writeFile(filePath, 'hello hashq\n');
  });

  afterAll(async () => {
    await queue?.close();
    await db?.end();
    await app?.close();
    await env?.cleanup();
  });

  const submit = (body: object, key?: string) => {
    const req = http().post('/v1/jobs');
    if (key) req.set('Idempotency-Key', key);
    return req.send(body);
  };

  it('stores a submitted job as queued, with the file size, and enqueues it under its own id', async () => {
    const res = await submit({
      source: { type: 'file', path: filePath },
      algorithms: ['sha256', 'sha1'],
    }).expect(202);
    const job = res.body;
    expect(job).toMatchObject({
      status: 'queued',
      source: { type: 'file', path: filePath },
      algorithms: ['sha256', 'sha1'],
      progress: { bytesDone: 0, totalBytes: 12, percent: 0 },
      bytesRead: 0,
      attempts: 0,
      resumes: 0,
      digests: null,
      error: null,
    });
    expect(res.headers.location).toBe(`/v1/jobs/${job.id}`);

    const got = await http().get(`/v1/jobs/${job.id}`).expect(200);
    expect(got.body).toEqual(job);

    const row = await db.query('SELECT status, total_bytes, algorithms FROM jobs WHERE id = $1', [
      job.id,
    ]);
    expect(row.rows[0]).toEqual({
      status: 'queued',
      total_bytes: '12',
      algorithms: ['sha256', 'sha1'],
    });

    // The size rides along as a scheduling hint (a worker runs many small jobs at once).
    const queued = await queue.getJob(job.id);
    expect(queued?.data).toEqual({ jobId: job.id, totalBytes: 12 });
  });

  it('accepts a file:// URL as source and stores the normalized real path', async () => {
    const res = await submit({
      source: `file://${filePath}`,
      algorithms: ['sha256'],
      priority: 5,
    }).expect(202);
    expect(res.body.source).toEqual({ type: 'file', path: filePath });
    expect(res.body.options).toEqual({ priority: 5 });
    expect((await queue.getJob(res.body.id))?.opts.priority).toBe(5);
  });

  it('returns the same job for the same Idempotency-Key and body, 409 for another body', async () => {
    const body = { source: { type: 'file', path: filePath }, algorithms: ['sha256'] };
    const first = await submit(body, 'key-1').expect(202);
    // same body, keys in another order
    const again = await submit(
      { algorithms: ['sha256'], source: { path: filePath, type: 'file' } },
      'key-1',
    ).expect(202);
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers['idempotent-replayed']).toBe('true');

    const conflict = await submit({ ...body, algorithms: ['sha1'] }, 'key-1').expect(409);
    expect(conflict.body.error).toMatchObject({
      code: 'IDEMPOTENCY_KEY_REUSED',
      details: { jobId: first.body.id },
    });

    const other = await submit(body, 'key-2').expect(202);
    expect(other.body.id).not.toBe(first.body.id);
    const count = await db.query('SELECT count(*)::int AS n FROM jobs WHERE idempotency_key = $1', [
      'key-1',
    ]);
    expect(count.rows[0].n).toBe(1);
  });

  it('deduplicates concurrent requests with one Idempotency-Key', async () => {
    const body = { source: { type: 'file', path: filePath }, algorithms: ['md5'] };
    const responses = await Promise.all([1, 2, 3, 4].map(() => submit(body, 'key-concurrent')));
    expect(responses.map((r) => r.status)).toEqual([202, 202, 202, 202]);
    expect(new Set(responses.map((r) => r.body.id)).size).toBe(1);
  });

  describe('GET /v1/jobs', () => {
    const created: string[] = [];

    beforeAll(async () => {
      await db.query('DELETE FROM jobs');
      for (let i = 0; i < 7; i++) {
        const res = await submit({
          source: { type: 'file', path: filePath },
          algorithms: ['sha256'],
        }).expect(202);
        created.push(res.body.id);
      }
    });

    it('pages through every job exactly once, newest first', async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const query: Record<string, string | number> = { limit: 3 };
        if (cursor) query.cursor = cursor;
        const res = await http().get('/v1/jobs').query(query).expect(200);
        expect(res.body.items.length).toBeLessThanOrEqual(3);
        seen.push(...res.body.items.map((job: { id: string }) => job.id));
        cursor = res.body.nextCursor;
        pages++;
      } while (cursor);
      expect(pages).toBe(3);
      expect(seen).toEqual([...created].reverse());
    });

    it('filters by status', async () => {
      await db.query(`UPDATE jobs SET status = 'failed' WHERE id = ANY($1)`, [
        [created[1], created[4]],
      ]);
      const failed = await http().get('/v1/jobs?status=failed').expect(200);
      expect(failed.body.items.map((job: { id: string }) => job.id)).toEqual([
        created[4],
        created[1],
      ]);
      expect(failed.body.nextCursor).toBeNull();
      const queued = await http().get('/v1/jobs?status=queued&limit=100').expect(200);
      expect(queued.body.items).toHaveLength(5);
      expect(queued.body.items.every((job: { status: string }) => job.status === 'queued')).toBe(
        true,
      );
    });

    it('uses a default page size of 20 and returns an empty last page', async () => {
      const res = await http().get('/v1/jobs').expect(200);
      expect(res.body.items).toHaveLength(7);
      expect(res.body.nextCursor).toBeNull();
    });
  });

  describe('POST /v1/jobs/:id/cancel', () => {
    it('cancels a queued job at once and takes it out of the queue', async () => {
      const job = (
        await submit({ source: { type: 'file', path: filePath }, algorithms: ['sha256'] }).expect(
          202,
        )
      ).body;
      expect(await queue.getJob(job.id)).toBeDefined();

      const res = await http().post(`/v1/jobs/${job.id}/cancel`).expect(200);
      expect(res.body).toMatchObject({ id: job.id, status: 'canceled', cancelRequested: true });
      expect(res.body.finishedAt).not.toBeNull();
      expect(await queue.getJob(job.id)).toBeUndefined();
      expect((await http().get(`/v1/jobs/${job.id}`).expect(200)).body.status).toBe('canceled');

      // canceling again is harmless
      await http().post(`/v1/jobs/${job.id}/cancel`).expect(200);
    });

    it('asks a running job to stop (202) and leaves its status to the worker', async () => {
      const job = (
        await submit({ source: { type: 'file', path: filePath }, algorithms: ['sha256'] }).expect(
          202,
        )
      ).body;
      await db.query(`UPDATE jobs SET status = 'running', fence = 1 WHERE id = $1`, [job.id]);
      const res = await http().post(`/v1/jobs/${job.id}/cancel`).expect(202);
      expect(res.body).toMatchObject({ status: 'running', cancelRequested: true });
    });

    it('refuses to cancel a finished job (409) and an unknown one (404)', async () => {
      const job = (
        await submit({ source: { type: 'file', path: filePath }, algorithms: ['sha256'] }).expect(
          202,
        )
      ).body;
      await db.query(`UPDATE jobs SET status = 'succeeded', finished_at = now() WHERE id = $1`, [
        job.id,
      ]);
      const finished = await http().post(`/v1/jobs/${job.id}/cancel`).expect(409);
      expect(finished.body.error).toMatchObject({
        code: 'JOB_FINISHED',
        details: { status: 'succeeded' },
      });

      const unknown = await http()
        .post('/v1/jobs/00000000-0000-4000-8000-000000000000/cancel')
        .expect(404);
      expect(unknown.body.error.code).toBe('JOB_NOT_FOUND');
    });
  });

  it('shows digests, errors and progress as the worker wrote them', async () => {
    const job = (
      await submit({ source: { type: 'file', path: filePath }, algorithms: ['sha256'] }).expect(202)
    ).body;
    const digests = {
      sha256: { hex: 'ab'.repeat(32), base64: Buffer.alloc(32, 0xab).toString('base64') },
    };
    await db.query(
      `UPDATE jobs SET status = 'succeeded', bytes_done = 12, bytes_read = 24, attempts = 2, resumes = 1,
              digests = $2, started_at = now() - interval '2 seconds', finished_at = now() WHERE id = $1`,
      [job.id, JSON.stringify(digests)],
    );
    const res = await http().get(`/v1/jobs/${job.id}`).expect(200);
    expect(res.body).toMatchObject({
      status: 'succeeded',
      progress: { bytesDone: 12, totalBytes: 12, percent: 100 },
      bytesRead: 24,
      attempts: 2,
      resumes: 1,
      digests,
      error: null,
    });
    expect(res.body.throughputBytesPerSecond).toBeGreaterThan(0);

    await db.query(
      `UPDATE jobs SET status = 'failed', error_code = 'DIGEST_MISMATCH', error_message = 'sha256 differs',
              error_details = '{"sha256":{"expected":"00","actual":"ab"}}' WHERE id = $1`,
      [job.id],
    );
    const failed = await http().get(`/v1/jobs/${job.id}`).expect(200);
    expect(failed.body.error).toEqual({
      code: 'DIGEST_MISMATCH',
      message: 'sha256 differs',
      details: { sha256: { expected: '00', actual: 'ab' } },
    });
  });

  it('re-enqueues unfinished jobs that Redis lost, and only those', async () => {
    const queuedJob = (
      await submit({ source: { type: 'file', path: filePath }, algorithms: ['sha256'] }).expect(202)
    ).body;
    const runningJob = (
      await submit({ source: { type: 'file', path: filePath }, algorithms: ['sha1'] }).expect(202)
    ).body;
    const doneJob = (
      await submit({ source: { type: 'file', path: filePath }, algorithms: ['md5'] }).expect(202)
    ).body;
    await db.query(`UPDATE jobs SET status = 'running', fence = 3 WHERE id = $1`, [runningJob.id]);
    await db.query(`UPDATE jobs SET status = 'succeeded' WHERE id = $1`, [doneJob.id]);
    await queue.obliterate({ force: true }); // Redis loses every key of the queue

    const restored = await app.get(JobQueueReconciler).reconcile();
    expect(restored).toBe(await unfinishedCount());
    expect((await queue.getJob(queuedJob.id))?.data).toEqual({
      jobId: queuedJob.id,
      totalBytes: 12,
    });
    expect((await queue.getJob(runningJob.id))?.data).toEqual({
      jobId: runningJob.id,
      totalBytes: 12,
    });
    expect(await queue.getJob(doneJob.id)).toBeUndefined();
    expect(await app.get(JobQueueReconciler).reconcile()).toBe(0);
  });

  async function unfinishedCount(): Promise<number> {
    const { rows } = await db.query(
      `SELECT count(*)::int AS n FROM jobs WHERE status IN ('queued', 'running')`,
    );
    return rows[0].n;
  }

  it('answers 404 JOB_NOT_FOUND for unknown and malformed ids', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const res = await http().get(`/v1/jobs/${id}`).expect(404);
      expect(res.body.error.code).toBe('JOB_NOT_FOUND');
    }
  });
});
