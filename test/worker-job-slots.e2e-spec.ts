/**
 * A worker runs many small jobs at once but large ones only WORKER_CONCURRENCY at a time: large
 * jobs fetched while the large slot is taken go back to the queue before any lease, so every job
 * ends with one attempt, and never two large jobs run side by side. Digests against Node's crypto.
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { HASH_QUEUE, hashJobData, hashJobOptions } from '@hashq/jobs';

import { fileDigest, type LogLine, MiB, WorkerTestEnv } from './helpers/worker-process';

describe('worker job slots: small jobs side by side, large ones one at a time', () => {
  const env = new WorkerTestEnv();
  beforeAll(() => env.setUp());
  afterAll(() => env.tearDown());

  /** A queued row with its size, enqueued with the size hint, as the API does. */
  async function submit(path: string, totalBytes: number): Promise<string> {
    const { rows } = await env.db.query<{ id: string }>(
      `INSERT INTO jobs (status, source, algorithms, total_bytes)
       VALUES ('queued', $1, '{sha256}', $2) RETURNING id`,
      [JSON.stringify({ type: 'file', path }), totalBytes],
    );
    const id = rows[0].id;
    await env.queue.add(HASH_QUEUE, hashJobData(id, totalBytes), hashJobOptions(id));
    return id;
  }

  it('hashes them all right, each in one attempt, at most one large job at a time', async () => {
    const large: string[] = [];
    const small: string[] = [];
    const expected = new Map<string, string>();
    // Large first: the worker fetches them together with the small ones behind them.
    for (let i = 0; i < 3; i++) {
      const path = await env.createFile(`large-${i}.bin`, 3);
      const id = await submit(path, 3 * MiB);
      large.push(id);
      expected.set(id, await fileDigest('sha256', path));
    }
    for (let i = 0; i < 12; i++) {
      const path = join(env.dataDir, `small-${i}.bin`);
      await writeFile(path, randomBytes(4096 + i));
      const id = await submit(path, 4096 + i);
      small.push(id);
      expected.set(id, await fileDigest('sha256', path));
    }

    const worker = env.startWorker({
      CHUNK_BYTES: String(MiB), // a small job fits in one read
      WORKER_CONCURRENCY: '1',
      WORKER_SMALL_JOB_CONCURRENCY: '16',
    });
    for (const [id, digest] of expected) {
      const row = await env.waitForJob(id, (job) => job.status === 'succeeded', worker, 90_000);
      expect([id, row.digests?.sha256.hex, row.attempts]).toEqual([id, digest, 1]);
    }

    // Large jobs log 'starting' (small ones only at debug) and 'finished', in the order they ran.
    const largeIds = new Set(large);
    const isLarge = (line: LogLine) => largeIds.has(line.jobId as string);
    let running = 0;
    let most = 0;
    for (const line of worker.lines.filter(isLarge)) {
      if (line.msg === 'starting') most = Math.max(most, ++running);
      if (line.msg === 'finished') running--;
    }
    expect(most).toBe(1);
    expect(worker.lines.filter((line) => isLarge(line) && line.msg === 'finished')).toHaveLength(3);
  });
});
