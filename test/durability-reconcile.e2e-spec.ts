/**
 * The worker's own queue reconciler (no API running): PostgreSQL holds queued jobs and running
 * jobs whose BullMQ jobs are gone (every key of THIS test's prefix deleted, never FLUSHALL).
 * Two worker processes started afresh put them back at start and every RECONCILE_SECONDS:
 * - queued jobs, and a running job whose lease expired (its worker died), succeed with the
 *   digest of Node's crypto, each processed to completion exactly once over both workers;
 * - a running job whose lease is alive is left alone (its fence unchanged, no BullMQ job) until
 *   the lease runs out; then a periodic round picks it up and it succeeds too.
 * And a job whose BullMQ job ended 'failed' although PostgreSQL still calls it running (its
 * worker could not record the outcome) gets a fresh BullMQ job once its lease is dead.
 */
import { HASH_QUEUE } from '@hashq/jobs';
import { UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';

import { fileDigest, type LogLine, MiB, WorkerTestEnv } from './helpers/worker-process';

const settings = {
  CHUNK_BYTES: String(1 * MiB),
  CHECKPOINT_BYTES: String(2 * MiB),
  CHECKPOINT_SECONDS: '3600',
  RECONCILE_SECONDS: '1',
};
// Alive for longer than the first part can take, whatever the load: the test ends the lease itself
// once it has checked that the lease was respected (with 20 s, a slow first part would have seen
// it run out, and a round take the job, before the 'left alone' check).
const LEASE_ALIVE_SECONDS = 3600;

const finished = (id: string) => (line: LogLine) => line.jobId === id && line.msg === 'finished';

async function deleteKeys(redisUrl: string, prefix: string): Promise<number> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  let deleted = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      if (keys.length > 0) deleted += await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return deleted;
}

describe('durability: the worker reconciles the queue with PostgreSQL (API not running)', () => {
  const env = new WorkerTestEnv();
  afterAll(() => env.tearDown());

  it('re-enqueues queued jobs and running jobs whose lease is not alive, once each', async () => {
    await env.setUp();
    const paths: string[] = [];
    for (let i = 0; i < 8; i++) paths.push(await env.createFile(`r${i}.bin`, 6));
    const expected = await Promise.all(paths.map((path) => fileDigest('sha256', path)));
    const ids: string[] = [];
    for (const path of paths) ids.push(await env.submit(path, ['sha256', 'sha512']));
    const [deadLeased, aliveLeased] = ids.slice(-2);
    const queued = ids.slice(0, -2);
    // A worker died holding this one (lease expired) …
    await env.db.query(
      `UPDATE jobs SET status = 'running', fence = 1, attempts = 1, lease_owner = 'dead', lease_expires_at = now() - interval '1 second'
        WHERE id = $1`,
      [deadLeased],
    );
    // … and another worker still holds this one.
    await env.db.query(
      `UPDATE jobs SET status = 'running', fence = 1, attempts = 1, lease_owner = 'busy',
              lease_expires_at = now() + make_interval(secs => $2) WHERE id = $1`,
      [aliveLeased, LEASE_ALIVE_SECONDS],
    );

    expect(await deleteKeys(env.env.redisUrl, env.env.queuePrefix)).toBeGreaterThan(0);
    for (const id of ids) expect(await env.queue.getJob(id)).toBeUndefined();

    const workers = [env.startWorker(settings), env.startWorker(settings)];
    for (const id of [...queued, deadLeased]) {
      await env.waitForJob(
        id,
        (job) => job.status !== 'queued' && job.status !== 'running',
        workers[0],
        120_000,
      );
    }
    expect(
      workers
        .flatMap((worker) => worker.lines)
        .some((line) => line.msg === 're-enqueued jobs missing from Redis'),
    ).toBe(true);

    // Rounds have run (the others are done): the job with a live lease was not touched.
    const { rows } = await env.db.query<{ fence: string; owner: string; alive: boolean }>(
      `SELECT fence, lease_owner AS owner, lease_expires_at > now() AS alive FROM jobs WHERE id = $1`,
      [aliveLeased],
    );
    expect(rows[0]).toEqual({ fence: '1', owner: 'busy', alive: true });
    expect(await env.queue.getJob(aliveLeased)).toBeUndefined();

    // Its lease runs out (nobody renews it; its end is brought forward to now): a periodic round picks it up.
    const expired = await env.db.query(
      `UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE id = $1 AND fence = 1 AND lease_owner = 'busy'`,
      [aliveLeased],
    );
    expect(expired.rowCount).toBe(1);
    const late = await env.waitForJob(
      aliveLeased,
      (job) => job.status !== 'queued' && job.status !== 'running',
      workers[1],
      60_000,
    );
    expect(late.fence).toBeGreaterThanOrEqual(2);

    for (const [i, id] of ids.entries()) {
      const job = await env.job(id);
      expect([id, job.status, job.digests?.sha256.hex]).toEqual([id, 'succeeded', expected[i]]);
      // processed to completion once over both workers
      expect([id, workers.flatMap((worker) => worker.lines).filter(finished(id)).length]).toEqual([
        id,
        1,
      ]);
    }
    await Promise.all(workers.map((worker) => worker.stop()));
  }, 180_000);
});

describe('durability: a BullMQ job that failed while PostgreSQL says running', () => {
  const env = new WorkerTestEnv();
  afterAll(() => env.tearDown());

  it('is replaced by a fresh one once the lease is dead, and the job succeeds', async () => {
    await env.setUp();
    const path = await env.createFile('stuck.bin', 4);
    const id = await env.submit(path, ['sha256']);
    // A consumer that fails the BullMQ job for good without touching PostgreSQL (as a worker
    // that lost PostgreSQL on its last attempt would).
    const failing = new Worker(
      HASH_QUEUE,
      async () => {
        throw new UnrecoverableError('could not record the outcome');
      },
      { connection: { url: env.env.redisUrl }, prefix: env.env.queuePrefix },
    );
    try {
      for (let i = 0; i < 100 && (await env.queue.getJob(id))?.failedReason === undefined; i++) {
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      await failing.close();
    }
    expect(await (await env.queue.getJob(id))!.getState()).toBe('failed');
    await env.db.query(
      `UPDATE jobs SET status = 'running', fence = 1, attempts = 1, lease_owner = 'gone', lease_expires_at = now() - interval '1 second'
        WHERE id = $1`,
      [id],
    );

    const worker = env.startWorker(settings);
    const done = await env.waitForJob(
      id,
      (job) => job.status !== 'queued' && job.status !== 'running',
      worker,
      60_000,
    );
    expect([done.status, done.digests?.sha256.hex, done.fence]).toEqual([
      'succeeded',
      await fileDigest('sha256', path),
      2,
    ]);
    expect(worker.lines.filter(finished(id))).toHaveLength(1);
    await worker.stop();
  }, 90_000);
});
