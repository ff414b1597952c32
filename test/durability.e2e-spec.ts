/**
 * Durability: PostgreSQL is the truth, Redis only dispatches.
 *
 * - Redis loss: 20 jobs queued and running; every BullMQ key of THIS test's
 *   prefix is deleted (never FLUSHALL: the Redis server is shared); the API's
 *   reconciler puts the unfinished jobs back; all 20 succeed with digests equal
 *   to Node's crypto, and no job is processed to completion twice.
 * - PostgreSQL loss: the worker's sessions are killed with pg_terminate_backend
 *   mid-job; the job still succeeds with the right digest.
 */
import { JobQueueReconciler } from '@hashq/jobs';
import type { INestApplication } from '@nestjs/common';
import { Redis } from 'ioredis';

import { createApiApp } from './helpers/api';
import {
  fileDigest,
  isCheckpoint,
  type LogLine,
  MiB,
  WorkerTestEnv,
} from './helpers/worker-process';

const settings = {
  CHUNK_BYTES: String(1 * MiB),
  CHECKPOINT_BYTES: String(4 * MiB),
  CHECKPOINT_SECONDS: '3600',
};

const finished = (id: string) => (line: LogLine) => line.jobId === id && line.msg === 'finished';

describe('durability: Redis loss', () => {
  const env = new WorkerTestEnv();
  let api: INestApplication | undefined;
  afterAll(async () => {
    await api?.close();
    await env.tearDown();
  });

  it('20 jobs survive the loss of every BullMQ key of the prefix', async () => {
    await env.setUp();
    const JOBS = 20;
    const paths: string[] = [];
    // The first two (taken first: BullMQ is FIFO, concurrency 2) are large, so they are still in
    // flight when the loss happens; the rest are small to keep the test short.
    for (let i = 0; i < JOBS; i++) paths.push(await env.createFile(`f${i}.bin`, i < 2 ? 64 : 12));
    const expected = await Promise.all(paths.map((path) => fileDigest('sha256', path)));
    const ids: string[] = [];
    for (const path of paths) ids.push(await env.submit(path, ['sha256', 'sha512']));

    const worker = env.startWorker({ ...settings, WORKER_CONCURRENCY: '2' });
    await worker.waitForLog(
      (line) => ids.includes(line.jobId as string) && isCheckpoint(4 * MiB)(line),
      60_000,
    );
    // Freeze the worker (SIGSTOP) while Redis is lost and PostgreSQL is read, so that what the test
    // asserts about the moment of the loss holds by construction, not by a race with the hashing
    // (it once failed in CI: 12 MiB jobs finished between the log line and the query, running = 0).
    worker.kill('SIGSTOP');
    let byStatus: Record<string, number>;
    try {
      // Lose Redis: delete only this test's keys.
      const redis = new Redis(env.env.redisUrl, { maxRetriesPerRequest: 1 });
      let deleted = 0;
      try {
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(
            cursor,
            'MATCH',
            `${env.env.queuePrefix}:*`,
            'COUNT',
            1000,
          );
          if (keys.length > 0) deleted += await redis.del(...keys);
          cursor = next;
        } while (cursor !== '0');
      } finally {
        redis.disconnect();
      }
      expect(deleted).toBeGreaterThan(0);
      const { rows } = await env.db.query<{ status: string; n: number }>(
        `SELECT status, count(*)::int AS n FROM jobs GROUP BY status`,
      );
      byStatus = Object.fromEntries(rows.map((row) => [row.status, row.n]));
    } finally {
      worker.kill('SIGCONT');
    }
    expect(byStatus.queued ?? 0).toBeGreaterThanOrEqual(10); // the loss happened with jobs still waiting
    expect(byStatus.running ?? 0).toBeGreaterThanOrEqual(1); // … and with jobs in flight

    // The API's reconciler re-enqueues them: it runs when the app starts (and every 30 s) and is
    // called here once more, which waits for a round in progress. Which round restored a job does
    // not matter (rounds are idempotent); afterwards every job PostgreSQL still calls queued has its
    // BullMQ job again.
    api = await createApiApp(env.env);
    await api.get(JobQueueReconciler).reconcile();
    const { rows: waiting } = await env.db.query<{ id: string }>(
      `SELECT id FROM jobs WHERE status = 'queued'`,
    );
    const missing: string[] = [];
    for (const { id } of waiting) {
      if (await env.queue.getJob(id)) continue;
      // a job the worker took and finished meanwhile is not missing (its BullMQ job may be gone)
      if ((await env.job(id)).status === 'queued') missing.push(id);
    }
    expect(missing).toEqual([]);
    expect(waiting.length).toBeGreaterThanOrEqual(5); // still a real test: most had not started yet

    for (const id of ids) {
      await env.waitForJob(
        id,
        (job) => job.status !== 'queued' && job.status !== 'running',
        worker,
        120_000,
      );
    }
    for (const [i, id] of ids.entries()) {
      const job = await env.job(id);
      expect([id, job.status, job.digests?.sha256.hex]).toEqual([id, 'succeeded', expected[i]]);
      // Processed to completion once: one "finished" line per job, whatever was re-enqueued.
      expect([id, worker.lines.filter(finished(id)).length]).toEqual([id, 1]);
    }
    await worker.stop();
  });
});

describe('durability: PostgreSQL loss', () => {
  const env = new WorkerTestEnv();
  afterAll(() => env.tearDown());

  it('the worker survives pg_terminate_backend of its sessions mid-job', async () => {
    await env.setUp();
    const path = await env.createFile('pg.bin', 96);
    const expected = await fileDigest('sha256', path);
    const id = await env.submit(path, ['sha256', 'sha512']);
    const worker = env.startWorker(settings);

    for (const offset of [8 * MiB, 40 * MiB]) {
      await worker.waitForLog((line) => line.jobId === id && isCheckpoint(offset)(line), 60_000);
      const { rows } = await env.db.query<{ killed: boolean }>(
        `SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid()`,
      );
      expect(rows.filter((row) => row.killed).length).toBeGreaterThan(0);
    }
    const done = await env.waitForJob(
      id,
      (job) => job.status !== 'queued' && job.status !== 'running',
      worker,
      120_000,
    );
    await worker.stop();
    expect(done.status).toBe('succeeded');
    expect(done.digests?.sha256.hex).toBe(expected);
    expect(done.total_bytes).toBe(96 * MiB);
  });
});
