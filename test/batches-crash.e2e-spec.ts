/**
 * Batches survive SIGKILLed workers: during the listing, while groups write their results, and
 * during a big item's job. Held at known points by locks, not by timing: a row lock on the batch
 * (the listing's next page waits), a table lock on batch_items (listing inserts and group result
 * writes wait), a lock on job_states (a big item's first checkpoint waits). After the kills the
 * batch completes and every object has exactly one row with one result.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

import type { INestApplication } from '@nestjs/common';
import { Client } from 'pg';

import { createApiApp } from './helpers/api';
import { BatchClient, sha256, writeTree } from './helpers/batches';
import { deleteRedisKeys } from './helpers/env';
import { fileDigest, MiB, type WorkerProcess, WorkerTestEnv } from './helpers/worker-process';

const FILES = 3000;

// The machine is shared: whole batches through real processes get generous time.
const TIMEOUT = 300_000;

describe('batches survive killed workers', () => {
  const env = new WorkerTestEnv();
  let app: INestApplication;
  let client: BatchClient;
  const workers: WorkerProcess[] = [];
  const settings = {
    BATCH_GROUP_SIZE: '25',
    BATCH_SMALL_ITEM_BYTES: String(MiB),
    CHUNK_BYTES: String(MiB),
    CHECKPOINT_BYTES: String(16 * MiB),
    CHECKPOINT_SECONDS: '3600',
  };
  const start = async () => {
    const worker = env.startWorker(settings);
    workers.push(worker);
    await worker.waitForLog((line) => line.msg === 'worker started');
    return worker;
  };
  const kill = async (worker: WorkerProcess) => {
    worker.kill('SIGKILL');
    await worker.exited;
  };

  beforeAll(async () => {
    await env.setUp();
    // Only the workers reconcile during the tests (every second where a test asks): the API's
    // rounds stay out of the way.
    app = await createApiApp({ ...env.env, env: { ...env.env.env, RECONCILE_SECONDS: '3600' } });
    client = new BatchClient(app, () => workers);
  });

  afterEach(async () => {
    for (const worker of workers.splice(0)) await worker.stop('SIGKILL');
  });

  afterAll(async () => {
    await app?.close();
    await env.tearDown();
  });

  /** A session of its own that holds a lock until released. */
  async function locker(sql: string, params: unknown[] = []): Promise<Client> {
    const session = new Client({ connectionString: env.env.databaseUrl });
    session.on('error', () => undefined);
    await session.connect();
    await session.query('BEGIN');
    await session.query(sql, params);
    return session;
  }

  async function waitForLockWaiter(worker: WorkerProcess): Promise<void> {
    for (;;) {
      const { rows } = await env.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      if (rows[0].n > 0) return;
      if (!worker.running) throw new Error(`worker exited:\n${worker.tail()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async function batchRow(id: string) {
    const { rows } = await env.db.query<{ listed_items: string; listing_done: boolean }>(
      `SELECT listed_items, listing_done FROM batches WHERE id = $1`,
      [id],
    );
    return { listed: Number(rows[0].listed_items), done: rows[0].listing_done };
  }

  it(
    'lists and hashes every object exactly once across kills in listing and group writes',
    async () => {
      const files: Record<string, Buffer> = {};
      for (let i = 0; i < FILES; i++) files[`d${i % 7}/f ${i}.bin`] = randomBytes(64 + (i % 50));
      const dir = await writeTree(join(env.dataDir, 'many'), files);

      const first = await start();
      const { id } = await client.submit({
        source: { type: 'directory', path: dir },
        algorithms: ['sha256'],
      });
      // 1. Some pages committed, the listing not done: hold its next page on the batch row, kill.
      while ((await batchRow(id)).listed < 250) await new Promise((r) => setTimeout(r, 5));
      const rowLock = await locker(`SELECT 1 FROM batches WHERE id = $1 FOR UPDATE`, [id]);
      expect((await batchRow(id)).done).toBe(false);
      await waitForLockWaiter(first);
      await kill(first);
      await rowLock.end();

      // 2. batch_items locked: the next worker's listing inserts and its group writes wait; kill it.
      const tableLock = await locker(`LOCK TABLE batch_items IN SHARE MODE`);
      const second = await start();
      await waitForLockWaiter(second);
      await kill(second);
      await tableLock.end();

      // 3. A third worker finishes the batch.
      await start();
      const batch = await client.ended(id, 120_000);
      expect(batch.status).toBe('succeeded');
      expect(batch.items).toMatchObject({
        total: FILES,
        listed: FILES,
        done: FILES,
        succeeded: FILES,
      });

      const { rows } = await env.db.query<{ n: number; names: number; ok: number; seqs: number }>(
        `SELECT count(*)::int AS n, count(DISTINCT name)::int AS names,
              count(*) FILTER (WHERE status = 'succeeded' AND digests IS NOT NULL)::int AS ok,
              max(seq)::int AS seqs
         FROM batch_items WHERE batch_id = $1`,
        [id],
      );
      expect(rows[0]).toEqual({ n: FILES, names: FILES, ok: FILES, seqs: FILES });
      for (const item of await client.items(id)) {
        expect(item.digests!.sha256.hex).toBe(sha256(files[item.name]));
      }
    },
    TIMEOUT,
  );

  it(
    'after Redis loses every key mid-batch, the reconciler brings the batch back from PostgreSQL',
    async () => {
      const files: Record<string, Buffer> = {};
      for (let i = 0; i < 1000; i++) files[`f${i}`] = randomBytes(100 + (i % 13));
      const dir = await writeTree(join(env.dataDir, 'flushed'), files);
      const fast = { LEASE_SECONDS: '5', RECONCILE_SECONDS: '1' };
      const first = env.startWorker({ ...settings, ...fast });
      workers.push(first);
      await first.waitForLog((line) => line.msg === 'worker started');
      const { id } = await client.submit({
        source: { type: 'directory', path: dir },
        algorithms: ['sha256'],
      });
      while ((await batchRow(id)).listed < 100) await new Promise((r) => setTimeout(r, 5));
      const rowLock = await locker(`SELECT 1 FROM batches WHERE id = $1 FOR UPDATE`, [id]);
      await waitForLockWaiter(first);
      await kill(first);
      await deleteRedisKeys(env.env.redisUrl, env.env.queuePrefix);
      await rowLock.end();

      const second = env.startWorker({ ...settings, ...fast });
      workers.push(second);
      const batch = await client.ended(id, 120_000);
      expect(batch.status).toBe('succeeded');
      expect(batch.items).toMatchObject({ total: 1000, succeeded: 1000 });
      expect(
        second.lines.some((line) => line.msg === 're-enqueued batch work missing from Redis'),
      ).toBe(true);
      const { rows } = await env.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM batch_items WHERE batch_id = $1`,
        [id],
      );
      expect(rows[0].n).toBe(1000);
    },
    TIMEOUT,
  );

  it(
    'a big item runs as a job and resumes from its checkpoint after a kill',
    async () => {
      await writeTree(join(env.dataDir, 'big'), { 'small.txt': Buffer.from('small') });
      const bigPath = await env.createFile('big/big.bin', 256);
      const states = await locker(`LOCK TABLE job_states IN SHARE MODE`);
      const worker = await start();
      const { id } = await client.submit({
        source: { type: 'directory', path: join(env.dataDir, 'big') },
        algorithms: ['sha256'],
      });
      await waitForLockWaiter(worker);
      worker.kill('SIGSTOP');
      await states.end();
      const { rows } = await env.db.query<{ job_id: string }>(
        `SELECT job_id FROM batch_items WHERE batch_id = $1 AND job_id IS NOT NULL`,
        [id],
      );
      expect(rows).toHaveLength(1);
      const jobId = rows[0].job_id;
      await env.waitForJob(jobId, (job) => job.checkpoint_offset > 0);
      await kill(worker);
      const checkpoint = (await env.job(jobId)).checkpoint_offset;
      expect(checkpoint).toBeGreaterThan(0);

      const next = await start();
      const batch = await client.ended(id, 120_000);
      expect(batch.status).toBe('succeeded');
      const job = await env.job(jobId);
      expect(job.status).toBe('succeeded');
      expect(job.resumes).toBeGreaterThanOrEqual(1);
      // The next run started at the committed checkpoint, not from 0.
      const runs = next.lines.filter((line) => line.jobId === jobId && line.msg === 'starting');
      expect(runs).toEqual([]);
      const resumed = next.lines.find(
        (line) => line.jobId === jobId && line.msg === 'resuming from checkpoint',
      );
      expect(resumed).toMatchObject({ offset: checkpoint, resumed: true });
      const big = (await client.items(id)).find((item) => item.name === 'big.bin')!;
      expect(big.jobId).toBe(jobId);
      expect(big.digests!.sha256.hex).toBe(await fileDigest('sha256', bigPath));
    },
    TIMEOUT,
  );
});
