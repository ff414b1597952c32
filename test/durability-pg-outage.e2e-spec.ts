/**
 * PostgreSQL outage seen by a worker in the middle of a job: its database connections go
 * through a TCP proxy (test/helpers/tcp-proxy.ts) that the test cuts (established connections
 * reset, new ones refused) for a few seconds and restores on the same port.
 *
 * - The worker keeps its position: heartbeats/checkpoints are retried with backoff while the
 *   hash states stay in memory, hashing pauses at the checkpoint lag bound, and when PostgreSQL
 *   is back the job goes on in the same attempt: it succeeds with Node's crypto's digest, with
 *   attempts = 1, resumes = 0 and bytes_read = total_bytes (nothing read twice).
 * - Fencing still holds: when the job's lease is taken over during the outage, the worker's
 *   retried write is the same fenced statement, matches nothing, and the worker stops without
 *   writing anything.
 */
import { TcpProxy } from './helpers/tcp-proxy';
import {
  fileDigest,
  isCheckpoint,
  type LogLine,
  MiB,
  type WorkerProcess,
  WorkerTestEnv,
} from './helpers/worker-process';

const SIZE_MIB = 256;
const settings = {
  CHUNK_BYTES: String(1 * MiB),
  CHECKPOINT_BYTES: String(2 * MiB),
  CHECKPOINT_SECONDS: '3600',
  PG_OUTAGE_MAX_SECONDS: '60',
};
const OUTAGE_MS = 4000;

const retrying = (id: string) => (line: LogLine) =>
  line.jobId === id && line.msg === 'database unavailable: retrying the write';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A worker whose PostgreSQL connections go through a new proxy. */
async function proxiedWorker(
  env: WorkerTestEnv,
  extra: Record<string, string> = {},
): Promise<{ worker: WorkerProcess; proxy: TcpProxy }> {
  const target = new URL(env.env.databaseUrl);
  const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
  await proxy.start();
  const viaProxy = Object.assign(new URL(env.env.databaseUrl), {
    hostname: '127.0.0.1',
    port: String(proxy.port),
  }).toString();
  return { worker: env.startWorker({ ...settings, DATABASE_URL: viaProxy, ...extra }), proxy };
}

describe('durability: PostgreSQL outage mid-job', () => {
  const env = new WorkerTestEnv();
  let proxy: TcpProxy | undefined;
  afterAll(async () => {
    await proxy?.cut();
    await env.tearDown();
  });

  it('keeps its position, retries its writes, and finishes in the same attempt', async () => {
    await env.setUp();
    const path = await env.createFile('outage.bin', SIZE_MIB);
    const expected = await fileDigest('sha256', path);
    const id = await env.submit(path, ['sha256', 'sha512']);
    const started = await proxiedWorker(env);
    const worker = started.worker;
    proxy = started.proxy;

    await worker.waitForLog((line) => line.jobId === id && isCheckpoint(8 * MiB)(line), 60_000);
    await started.proxy.cut();
    await worker.waitForLog(retrying(id), 20_000);
    await sleep(OUTAGE_MS);
    const during = await env.job(id);
    // Still mid-job: the outage did not let it finish, and nothing was written meanwhile.
    expect(during.status).toBe('running');
    expect(during.checkpoint_offset).toBeLessThan(SIZE_MIB * MiB);
    expect(worker.lines.filter(retrying(id)).length).toBeGreaterThanOrEqual(2);
    await started.proxy.start(); // PostgreSQL is back, same port

    const done = await env.waitForJob(
      id,
      (job) => job.status !== 'queued' && job.status !== 'running',
      worker,
      120_000,
    );
    expect(done.status).toBe('succeeded');
    expect(done.digests?.sha256.hex).toBe(expected);
    expect(done.total_bytes).toBe(SIZE_MIB * MiB);
    // Continued where it was, in the same attempt: no retry from the checkpoint, no byte read twice.
    expect([done.attempts, done.resumes, done.fence]).toEqual([1, 0, 1]);
    expect(done.bytes_read).toBe(done.total_bytes);
    expect(
      worker.lines.some(
        (line) => line.jobId === id && line.msg === 'database back: write committed',
      ),
    ).toBe(true);
    // 'finished' is logged once the final write has returned: the row can be seen before the line.
    await worker.waitForLog((line) => line.jobId === id && line.msg === 'finished', 10_000);
    expect(
      worker.lines.filter((line) => line.jobId === id && line.msg === 'finished'),
    ).toHaveLength(1);
    await worker.stop();
  });
});

describe('durability: PostgreSQL outage and a lease taken over meanwhile', () => {
  const env = new WorkerTestEnv();
  let proxy: TcpProxy | undefined;
  afterAll(async () => {
    await proxy?.cut();
    await env.tearDown();
  });

  it('the retried write is fenced: the stale worker writes nothing when PostgreSQL is back', async () => {
    await env.setUp();
    const path = await env.createFile('fenced.bin', SIZE_MIB);
    const id = await env.submit(path, ['sha256', 'sha512']);
    const started = await proxiedWorker(env);
    const worker = started.worker;
    proxy = started.proxy;

    await worker.waitForLog((line) => line.jobId === id && isCheckpoint(8 * MiB)(line), 60_000);
    await started.proxy.cut();
    await worker.waitForLog(retrying(id), 20_000);
    // Another owner takes the job over while the worker cannot reach PostgreSQL.
    await env.db.query(
      `UPDATE jobs SET fence = fence + 1, lease_owner = 'intruder', lease_expires_at = now() + interval '1 hour' WHERE id = $1`,
      [id],
    );
    const taken = await env.job(id);
    const states = await env.states(id);
    await started.proxy.start();

    await worker.waitForLog(
      (line) => line.jobId === id && /lease lost/.test(String(line.msg)),
      30_000,
    );
    await sleep(500);
    const after = await env.job(id);
    expect(after.fence).toBe(taken.fence);
    expect([
      after.status,
      after.checkpoint_offset,
      after.bytes_done,
      after.bytes_read,
      after.updated_at.getTime(),
    ]).toEqual([
      'running',
      taken.checkpoint_offset,
      taken.bytes_done,
      taken.bytes_read,
      taken.updated_at.getTime(),
    ]);
    expect(await env.states(id)).toEqual(states);
    expect(worker.lines.some((line) => line.jobId === id && line.msg === 'finished')).toBe(false);
    await worker.stop();
  });
});
