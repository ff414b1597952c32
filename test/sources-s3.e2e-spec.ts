/**
 * S3 sources through real worker processes: a real S3-compatible server
 * (s3rver, filesystem-backed in a temp dir, on 127.0.0.1, behind a counting
 * proxy) started and stopped by the suite. A worker is SIGKILLed mid-object;
 * the next one must read from the checkpoint offset (the proxy sees the Range
 * header and counts the bytes served), and the digest must equal Node's crypto.
 * An object replaced between the crash and the resume fails with SOURCE_CHANGED.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { HASH_QUEUE, hashJobOptions } from '@hashq/jobs';

import { startS3Server, type TestS3Server } from './helpers/s3-server';
import { isCheckpoint, MiB, WorkerTestEnv } from './helpers/worker-process';

const BUCKET = 'hashq-e2e';
const OBJECT_MIB = 48;
const settings = {
  CHUNK_BYTES: String(2 * MiB),
  CHECKPOINT_BYTES: String(4 * MiB),
  CHECKPOINT_SECONDS: '3600',
};

describe('S3 source: worker killed mid-object resumes by range', () => {
  const env = new WorkerTestEnv();
  let dir: string;
  let s3: TestS3Server;
  let admin: S3Client;
  let remoteEnv: Record<string, string>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hashq-s3e2e-'));
    s3 = await startS3Server(dir, [BUCKET]);
    await env.setUp();
    admin = new S3Client({
      endpoint: s3.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    remoteEnv = {
      ...settings,
      HASHQ_ALLOW_HOSTS: '127.0.0.1',
      S3_ENDPOINT: s3.endpoint,
      S3_FORCE_PATH_STYLE: 'true',
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
    };
  });
  afterAll(async () => {
    await env.tearDown();
    admin?.destroy();
    await s3?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  async function put(key: string, data: Buffer): Promise<void> {
    await admin.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: data }));
  }

  async function submitS3(key: string, algorithms: string[]): Promise<string> {
    const { rows } = await env.db.query<{ id: string }>(
      `INSERT INTO jobs (status, source, algorithms, options) VALUES ('queued', $1, $2, '{}') RETURNING id`,
      [JSON.stringify({ type: 's3', bucket: BUCKET, key }), algorithms],
    );
    await env.queue.add(HASH_QUEUE, { jobId: rows[0].id }, hashJobOptions(rows[0].id));
    return rows[0].id;
  }

  /** Starts a worker on `key`, kills it after a checkpoint past `minOffset`; returns the job row then. */
  async function killMidObject(id: string, minOffset: number) {
    s3.bytesPerSecond = 24 * MiB; // slow enough to die in the middle
    const worker = env.startWorker(remoteEnv);
    await worker.waitForLog((line) => line.jobId === id && isCheckpoint(minOffset)(line), 60_000);
    worker.kill('SIGKILL');
    await worker.exited;
    await env.waitForWorkerSessionsGone();
    return env.job(id);
  }

  it('resumed read starts at the checkpoint offset; digest equals Node crypto', async () => {
    const data = randomBytes(OBJECT_MIB * MiB);
    await put('big.bin', data);
    const id = await submitS3('big.bin', ['sha256', 'md5']);
    const crashed = await killMidObject(id, 8 * MiB);
    expect(crashed.status).toBe('running');
    expect(crashed.checkpoint_offset).toBeGreaterThanOrEqual(8 * MiB);
    expect(crashed.checkpoint_offset).toBeLessThan(data.length);

    s3.reset();
    s3.bytesPerSecond = 0;
    const worker = env.startWorker(remoteEnv);
    const done = await env.waitForJob(
      id,
      (job) => job.status !== 'running' && job.status !== 'queued',
      worker,
      60_000,
    );
    await worker.stop();

    expect(done.status).toBe('succeeded');
    expect(done.digests?.sha256.hex).toBe(createHash('sha256').update(data).digest('hex'));
    expect(done.digests?.md5.hex).toBe(createHash('md5').update(data).digest('hex'));
    expect(done.resumes).toBeGreaterThanOrEqual(1);
    expect(done.total_bytes).toBe(data.length);
    // After the crash: one ranged GET from the checkpoint, carrying exactly the rest of the object.
    const gets = s3.requests.filter((r) => r.method === 'GET');
    expect(gets.map((r) => r.range)).toEqual([`bytes=${crashed.checkpoint_offset}-`]);
    expect(gets[0].ifMatch).toBe(crashed.source_version?.etag);
    expect(s3.bodyBytes).toBe(data.length - crashed.checkpoint_offset);
  });

  it('object replaced between crash and resume → SOURCE_CHANGED, no digest', async () => {
    const data = randomBytes(24 * MiB);
    await put('replaced.bin', data);
    const id = await submitS3('replaced.bin', ['sha256']);
    const crashed = await killMidObject(id, 4 * MiB);
    expect(crashed.checkpoint_offset).toBeGreaterThan(0);
    data[data.length - 1] ^= 0xff;
    await put('replaced.bin', data);

    s3.bytesPerSecond = 0;
    const worker = env.startWorker(remoteEnv);
    const done = await env.waitForJob(
      id,
      (job) => job.status !== 'running' && job.status !== 'queued',
      worker,
      60_000,
    );
    await worker.stop();
    expect(done.status).toBe('failed');
    expect(done.error_code).toBe('SOURCE_CHANGED');
    expect(done.digests).toBeNull();
  });

  it('missing object → SOURCE_NOT_FOUND at once (no retries)', async () => {
    const id = await submitS3('no-such-object', ['sha256']);
    const worker = env.startWorker(remoteEnv);
    const done = await env.waitForJob(
      id,
      (job) => job.status !== 'running' && job.status !== 'queued',
      worker,
      30_000,
    );
    await worker.stop();
    expect([done.status, done.error_code, done.attempts]).toEqual([
      'failed',
      'SOURCE_NOT_FOUND',
      1,
    ]);
  });
});
