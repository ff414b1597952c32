/**
 * Graceful stop, fencing, source changes and cancel, with real worker
 * processes on real PostgreSQL + Redis. Digests are compared with Node's crypto.
 */
import { open, truncate } from 'node:fs/promises';

import { jobStateBinding, StateSealer } from '@hashq/crypto';
import { dataSourceOptions } from '@hashq/database';
import { JobsRepository } from '@hashq/jobs';
import { DataSource } from 'typeorm';

import { CheckpointStore } from '../apps/worker/src/checkpoint-store';
import { LeaseLostError } from '../apps/worker/src/job-errors';
import {
  fileDigest,
  hasFinished,
  MiB,
  type TableLock,
  WorkerTestEnv,
} from './helpers/worker-process';

const settings = {
  CHUNK_BYTES: String(8 * MiB),
  CHECKPOINT_BYTES: String(16 * MiB),
  CHECKPOINT_SECONDS: '3600',
};

describe('worker recovery (real processes)', () => {
  const env = new WorkerTestEnv();

  beforeAll(() => env.setUp());
  afterAll(() => env.tearDown());

  it('SIGTERM checkpoints the current position, hands the job back, and the next worker resumes from there', async () => {
    const path = await env.createFile('graceful.bin', 160);
    const id = await env.submit(path, ['sha256', 'sha512']);
    // SIGTERM must find the job mid-flight by construction, not by racing the hashing (the rest of
    // the file took ~0.1 s after a 'checkpoint >= 64 MiB' line): job_states is locked before the
    // worker starts, so its first checkpoint (48 or 56 MiB) waits and its hashing stops at the lag
    // bound (64 MiB); it cannot finish. The stop is seen at the 56 or 64 MiB boundary, after that
    // checkpoint was started, and the hand-back hashes the chunk read ahead: offset 64 or 72 MiB.
    const states = await env.lockTable('job_states');
    const first = env.startWorker({ ...settings, CHECKPOINT_BYTES: String(64 * MiB) });
    await states.waitForWaiter(first);

    // The helper would SIGKILL after 10 s; a worker that needed that fails the test.
    const stopping = first.stop('SIGTERM', 10_000);
    await first.waitForLog((line) => line.msg === 'stopping: handing back running jobs');
    await states.release(); // the waiting checkpoint commits, then the job is handed back
    const exit = await stopping;
    expect(exit.signal === 'SIGKILL').toBe(false);
    const handedBack = first.lines.find(
      (line) => line.jobId === id && line.msg === 'handed back on shutdown',
    );
    if (!handedBack) throw new Error(`no hand-back logged:\n${first.tail(30)}`);
    const offset = handedBack!.offset as number;
    expect(offset).toBeGreaterThanOrEqual(64 * MiB);

    const row = await env.job(id);
    expect(row).toMatchObject({ status: 'queued', checkpoint_offset: offset });
    // Given back to BullMQ's wait list at once (no stall timeout).
    expect(await (await env.queue.getJob(id))!.getState()).toBe('waiting');

    const second = env.startWorker(settings);
    const resumed = await second.waitForLog(
      (line) => line.jobId === id && line.msg === 'resuming from checkpoint',
    );
    expect(resumed.offset).toBe(offset);
    const done = await env.waitForJob(id, hasFinished, second);
    await second.stop();

    expect(done.status).toBe('succeeded');
    expect(done.digests?.sha256.hex).toBe(await fileDigest('sha256', path));
    expect(done.digests?.sha512.hex).toBe(await fileDigest('sha512', path));
    expect(done.resumes).toBe(1);
    expect(done.bytes_read).toBe(160 * MiB); // nothing read twice after a graceful stop
  }, 120_000);

  it('a worker whose fence went stale writes neither a checkpoint nor anything else', async () => {
    const path = await env.createFile('fenced.bin', 256);
    const id = await env.submit(path, ['sha256']);
    // The worker must still be mid-job, with a checkpoint on record, when its lease is taken: by
    // construction, not by racing the hashing (the whole file takes ~0.2 s). It is held frozen at
    // its first checkpoint and the lease taken meanwhile, i.e. a stalled worker that comes back.
    const { worker } = await env.startWorkerHeldAtCheckpoint(id, settings);
    let bumped: { rows: Array<{ fence: string }> };
    let before: Awaited<ReturnType<typeof env.job>>;
    let statesBefore: Map<string, Buffer>;
    try {
      // Another worker took the lease behind this one's back (what a stalled worker coming back sees).
      bumped = await env.db.query('UPDATE jobs SET fence = fence + 1 WHERE id = $1 RETURNING *', [
        id,
      ]);
      before = await env.job(id);
      statesBefore = await env.states(id);
    } finally {
      worker.kill('SIGCONT');
    }
    expect(Number(bumped.rows[0].fence)).toBe(before.fence);
    expect(statesBefore.has('sha256')).toBe(true);

    await worker.waitForLog(
      (line) =>
        line.jobId === id && typeof line.msg === 'string' && line.msg.startsWith('lease lost'),
    );
    const after = await env.job(id);
    expect(after).toEqual(before); // same offset, bytes, status, digests, even updated_at
    expect(await env.states(id)).toEqual(statesBefore);
    expect(after.status).toBe('running');
    expect(after.digests).toBeNull();
    // hash states (plaintext tails) never reach a log line
    const logged = worker.lines.map((line) => JSON.stringify(line)).join('\n');
    for (const state of statesBefore.values()) {
      expect(logged).not.toContain(state.toString('hex'));
      expect(logged).not.toContain(state.toString('base64'));
    }
    const stale = worker.lines.filter((line) => line.jobId === id && line.fence !== before.fence);
    expect(
      stale.some(
        (line) =>
          line.msg === 'checkpoint saved' && (line.offset as number) > before.checkpoint_offset,
      ),
    ).toBe(false);
    await worker.stop();
  });

  it('a stale fence cannot save a checkpoint, a result, a failure, a cancel, a hand-back or a requeue (store level)', async () => {
    const path = await env.createFile('store.bin', 1);
    const id = await env.submit(path, ['sha256']);
    const dataSource = await new DataSource(dataSourceOptions(env.env.config)).initialize();
    try {
      const sealer = new StateSealer(env.env.config.stateKeys);
      const store = new CheckpointStore(dataSource, env.env.config.databaseSchema, sealer, 30);
      const jobs = new JobsRepository(dataSource);
      const stale = (await jobs.lease(id, 'stale-worker', 30))!;
      const current = (await jobs.lease(id, 'current-worker', 30))!;
      expect(current.fence).toBe(stale.fence + 1);
      const version = { size: MiB, mtimeMs: 1, ino: '1' };
      await store.save(current, {
        offset: 4096,
        bytesRead: 4096,
        sourceVersion: version,
        states: new Map([['sha256', Buffer.from('current')]]),
      });
      const before = await env.job(id);

      const attempts: Array<() => Promise<unknown>> = [
        () => store.heartbeat(stale, { bytesDone: 8192, bytesRead: 8192 }),
        () =>
          store.save(stale, {
            offset: 8192,
            bytesRead: 8192,
            sourceVersion: version,
            states: new Map([['sha256', Buffer.from('stale')]]),
          }),
        () =>
          store.save(
            stale,
            {
              offset: 8192,
              bytesRead: 8192,
              sourceVersion: version,
              states: new Map([['sha256', Buffer.from('stale')]]),
            },
            true,
          ),
        () =>
          store.finish(stale, {
            status: 'succeeded',
            digests: { sha256: { hex: '00', base64: 'AA==' } },
            totalBytes: MiB,
            bytesRead: MiB,
          }),
        () => store.fail(stale, { code: 'SOURCE_CHANGED', message: 'stale' }, MiB),
        () => store.cancel(stale, MiB),
        () => store.requeue(stale, { code: 'INTERNAL_ERROR', message: 'stale' }, MiB),
        () => store.start(stale, { totalBytes: MiB, sourceVersion: version }),
      ];
      for (const attempt of attempts)
        await expect(attempt()).rejects.toBeInstanceOf(LeaseLostError);

      expect(await env.job(id)).toEqual(before);
      const stored = (await env.states(id)).get('sha256')!;
      expect(sealer.open(stored, jobStateBinding(id, 'sha256', 4096, current.fence))).toEqual(
        Buffer.from('current'),
      );
      // The current holder ends the job, so that no worker of a later test takes it (a worker failing
      // it would wait on the job_states lock of startWorkerHeldAtCheckpoint: the states go with it).
      await store.cancel(current, MiB);
    } finally {
      await dataSource.destroy();
    }
  });

  it('a source changed between a crash and the resume fails the job with SOURCE_CHANGED', async () => {
    const path = await env.createFile('changing.bin', 128);
    const id = await env.submit(path, ['sha256']);
    // Killed mid-job with a checkpoint on record by construction (a kill after a 'checkpoint >=
    // 32 MiB' line raced the last ~0.1 s of hashing): held frozen at its first checkpoint, then killed.
    const { worker: first } = await env.startWorkerHeldAtCheckpoint(id, settings);
    first.kill('SIGKILL');
    await first.exited;
    await env.waitForWorkerSessionsGone();
    expect(await env.job(id)).toMatchObject({ status: 'running', attempts: 1 });

    const handle = await open(path, 'r+');
    await handle.write(Buffer.from('changed'), 0, 7, 100 * MiB);
    await handle.close();

    const second = env.startWorker(settings);
    const done = await env.waitForJob(
      id,
      (job) => job.status === 'failed' || job.status === 'succeeded',
      second,
    );
    await second.stop();
    expect(done.status).toBe('failed');
    expect(done.error_code).toBe('SOURCE_CHANGED');
    expect(done.digests).toBeNull();
    expect(done.error_details).toMatchObject({
      expected: { size: 128 * MiB },
      actual: { size: 128 * MiB },
    });
    expect(done.attempts).toBe(2); // permanent: no retry
  }, 120_000);

  it('a file cut short while the worker hashes it from a mapping: SOURCE_CHANGED, the worker goes on', async () => {
    const path = await env.createFile('shrinking.bin', 40);
    // One 32 MiB range, which the worker hashes from a mapping of the file; photon-beetle does about
    // 9 MB/s, so the range takes seconds and the cut, half a second in, lands inside it well
    // before the hashing reaches the new end, where the page past it raises SIGBUS
    // (libs/native/README.md, "Mapped reads").
    const id = await env.submit(path, ['photonbeetlehash256']);
    const worker = env.startWorker({
      ...settings,
      CHUNK_BYTES: String(32 * MiB),
      CHECKPOINT_BYTES: String(32 * MiB),
    });
    await env.waitForJob(id, (job) => job.status === 'running', worker);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const cut = 16 * MiB + 77;
    await truncate(path, cut);
    const done = await env.waitForJob(id, hasFinished, worker);
    expect(done).toMatchObject({ status: 'failed', error_code: 'SOURCE_CHANGED', digests: null });
    // hashed exactly up to the new end: the fault rolled the hashers back, pread found the end
    expect(done.error_details).toMatchObject({
      size: 40 * MiB,
      bytesHashed: cut,
      changed: expect.arrayContaining(['size']),
    });
    expect(worker.running).toBe(true);
    // the same process hashes the next file right
    const next = await env.createFile('after.bin', 3);
    const again = await env.waitForJob(await env.submit(next, ['sha256']), hasFinished, worker);
    expect(again.digests?.sha256.hex).toBe(await fileDigest('sha256', next));
    await worker.stop();
  }, 120_000);

  it('a PostgreSQL connection killed mid-job is a transient error: retried with backoff, resumed from the checkpoint', async () => {
    const path = await env.createFile('pg-loss.bin', 192);
    const id = await env.submit(path, ['sha256']);
    // Writes are not retried in-process here (PG_OUTAGE_MAX_SECONDS=0): this is the path taken once
    // those retries are exhausted (the in-process retries: test/durability-pg-outage.e2e-spec.ts).
    // Cut a statement of the worker mid-flight, deterministically: lock the jobs table from another
    // session so the worker's next heartbeat/checkpoint write waits on the lock (its hashing stops at
    // the checkpoint lag bound), then terminate every other session of the test's own database.
    // (Killing at random could miss: an idle pooled connection is simply replaced, unnoticed.)
    // The worker is held mid-job with a checkpoint on record by construction too (locking after a
    // 'checkpoint >= 32 MiB' line raced the last ~0.15 s of hashing): held frozen at its first
    // checkpoint, jobs locked meanwhile; it goes on, and its next write waits.
    const transient = (line: Record<string, unknown>) =>
      line.jobId === id && line.code === 'INTERNAL_ERROR';
    const { worker } = await env.startWorkerHeldAtCheckpoint(id, {
      ...settings,
      PG_OUTAGE_MAX_SECONDS: '0',
    });
    let jobs: TableLock;
    try {
      jobs = await env.lockTable('jobs');
    } finally {
      worker.kill('SIGCONT');
    }
    try {
      await jobs.waitForWaiter(worker);
      await env.db.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND pid <> $1`,
        [jobs.pid],
      );
    } finally {
      await jobs.release(); // its transaction, and the lock, end with it
    }
    const done = await env.waitForJob(id, hasFinished, worker);
    await worker.stop();

    expect(done.status).toBe('succeeded');
    expect(done.digests?.sha256.hex).toBe(await fileDigest('sha256', path));
    expect(done.attempts).toBeGreaterThanOrEqual(2);
    expect(done.resumes).toBeGreaterThanOrEqual(1);
    expect(worker.lines.some(transient)).toBe(true);
  }, 120_000);

  it('a cancel request stops a running job within a chunk (its checkpoint offset kept, its states deleted)', async () => {
    const path = await env.createFile('cancel.bin', 256);
    const id = await env.submit(path, ['sha256']);
    // The cancel request must reach a running job with a checkpoint on record by construction, not
    // by racing the hashing (the whole file takes ~0.2 s): held frozen at its first checkpoint,
    // the cancel requested meanwhile.
    const { worker, checkpointed } = await env.startWorkerHeldAtCheckpoint(id, settings);
    try {
      await env.db.query('UPDATE jobs SET cancel_requested = true WHERE id = $1', [id]); // what POST /cancel does
    } finally {
      worker.kill('SIGCONT');
    }
    const done = await env.waitForJob(id, (job) => job.status !== 'running', worker);
    await worker.waitForLog((line) => line.jobId === id && line.msg === 'canceled');
    await worker.stop();

    expect(done.status).toBe('canceled');
    expect(checkpointed.status).toBe('running');
    expect(done.checkpoint_offset).toBeGreaterThanOrEqual(checkpointed.checkpoint_offset); // kept, not lost
    expect(done.checkpoint_offset).toBeLessThan(256 * MiB);
    expect(done.digests).toBeNull();
    expect((await env.states(id)).size).toBe(0); // a job that ends keeps no state
  });
});
