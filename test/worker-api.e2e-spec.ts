/**
 * The whole path: HTTP → API (in process) → PostgreSQL + BullMQ → a real worker
 * child process → PostgreSQL → HTTP. Digests are checked against Node's crypto
 * where it has the algorithm, and the native library's one-shot hash otherwise.
 */
import { createHash, randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { hash as nativeHash } from '@hashq/native';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';

import { createApiApp } from './helpers/api';
import { MiB, type WorkerProcess, WorkerTestEnv } from './helpers/worker-process';

interface JobBody {
  id: string;
  status: string;
  digests: Record<string, { hex: string; base64: string }> | null;
  error: { code: string; message: string; details?: unknown } | null;
  progress: { bytesDone: number; totalBytes: number | null };
  bytesRead: number;
  resumes: number;
}

describe('hash jobs through the API and a real worker process', () => {
  const env = new WorkerTestEnv();
  let app: INestApplication;
  let worker: WorkerProcess;
  let data: Buffer;
  let path: string;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    await env.setUp();
    app = await createApiApp(env.env);
    // Small chunks and checkpoints: several of each even for a few MiB.
    worker = env.startWorker({ CHUNK_BYTES: String(MiB), CHECKPOINT_BYTES: String(2 * MiB) });
    await worker.waitForLog((line) => line.msg === 'worker started');
    data = randomBytes(5 * MiB + 12_345); // not a multiple of any block or chunk size
    path = join(env.dataDir, 'input.bin');
    await writeFile(path, data);
  });

  afterAll(async () => {
    await worker?.stop();
    await app?.close();
    await env.tearDown();
  });

  async function submit(body: Record<string, unknown>): Promise<JobBody> {
    const res = await http().post('/v1/jobs').send(body);
    if (res.status !== 202)
      throw new Error(`submit answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body as JobBody;
  }

  async function finished(id: string, timeoutMs = 40_000): Promise<JobBody> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { body } = await http().get(`/v1/jobs/${id}`).expect(200);
      if (['succeeded', 'failed', 'canceled'].includes(body.status)) return body as JobBody;
      if (!worker.running) throw new Error(`worker exited:\n${worker.tail()}`);
      if (Date.now() > deadline) throw new Error(`job ${id} still ${body.status}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  const node = (algorithm: string, options?: { outputLength: number }) =>
    createHash(algorithm, options).update(data).digest();

  it('computes sha1, sha256 and sha512 in one job, equal to Node crypto (hex and base64)', async () => {
    const job = await finished(
      (await submit({ source: { type: 'file', path }, algorithms: ['sha1', 'sha256', 'sha512'] }))
        .id,
    );
    expect(job.status).toBe('succeeded');
    for (const algorithm of ['sha1', 'sha256', 'sha512']) {
      const digest = node(algorithm);
      expect(job.digests?.[algorithm]).toEqual({
        hex: digest.toString('hex'),
        base64: digest.toString('base64'),
      });
    }
    expect(job.progress).toEqual(
      expect.objectContaining({ bytesDone: data.length, totalBytes: data.length }),
    );
    expect(job.bytesRead).toBe(data.length);
  });

  it('names its PostgreSQL sessions: the worker hashq-worker, the API hashq-api (what the crash tests wait on)', async () => {
    await finished((await submit({ source: { type: 'file', path }, algorithms: ['md5'] })).id);
    const { rows } = await env.db.query<{ name: string }>(
      `SELECT DISTINCT application_name AS name FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() ORDER BY 1`,
    );
    expect(rows.map((row) => row.name)).toEqual(['hashq-api', 'hashq-worker']);
  });

  it('hashes an empty file', async () => {
    const empty = join(env.dataDir, 'empty.bin');
    await writeFile(empty, Buffer.alloc(0));
    const job = await finished(
      (await submit({ source: { type: 'file', path: empty }, algorithms: ['sha256', 'md5'] })).id,
    );
    expect(job.status).toBe('succeeded');
    expect(job.digests?.sha256.hex).toBe(createHash('sha256').digest('hex'));
    expect(job.digests?.md5.hex).toBe(createHash('md5').digest('hex'));
    expect(job.bytesRead).toBe(0);
  });

  it('computes the other families in one pass, equal to Node crypto or the native one-shot', async () => {
    const algorithms = [
      'sha3-256',
      'md5',
      'ascon-hash256',
      'xoodyak',
      'esch256',
      'crc32c',
      'sha224',
      'sha384',
    ];
    const job = await finished((await submit({ source: `file://${path}`, algorithms })).id);
    expect(job.status).toBe('succeeded');
    for (const algorithm of ['sha3-256', 'md5', 'sha224', 'sha384']) {
      expect(job.digests?.[algorithm].hex).toBe(node(algorithm).toString('hex'));
    }
    for (const algorithm of ['ascon-hash256', 'xoodyak', 'esch256', 'crc32c']) {
      expect(job.digests?.[algorithm].hex).toBe(nativeHash(algorithm, data).toString('hex'));
    }
  });

  it('honours outputLength for XOFs and a customization string for a CXOF', async () => {
    const xof = await finished(
      (
        await submit({
          source: { type: 'file', path },
          algorithms: ['shake256', 'ascon-xof128'],
          outputLength: 100,
        })
      ).id,
    );
    expect(xof.status).toBe('succeeded');
    expect(xof.digests?.shake256.hex).toBe(node('shake256', { outputLength: 100 }).toString('hex'));
    expect(xof.digests?.['ascon-xof128'].hex).toBe(
      nativeHash('ascon-xof128', data, { outputLength: 100 }).toString('hex'),
    );

    const customization = Buffer.from('hashq test').toString('hex');
    const cxof = await finished(
      (
        await submit({
          source: { type: 'file', path },
          algorithms: ['ascon-cxof128'],
          customization,
        })
      ).id,
    );
    expect(cxof.status).toBe('succeeded');
    const expected = nativeHash('ascon-cxof128', data, {
      customization: Buffer.from(customization, 'hex'),
    });
    expect(cxof.digests?.['ascon-cxof128'].hex).toBe(expected.toString('hex'));
    expect(expected.equals(nativeHash('ascon-cxof128', data))).toBe(false); // the customization mattered
  });

  it('succeeds when the expected digest matches and fails with DIGEST_MISMATCH and both values when not', async () => {
    const right = node('sha256').toString('hex');
    const ok = await finished(
      (
        await submit({
          source: { type: 'file', path },
          algorithms: ['sha256'],
          expected: { sha256: right },
        })
      ).id,
    );
    expect(ok.status).toBe('succeeded');
    expect(ok.error).toBeNull();

    const wrong = createHash('sha256').update('something else').digest('hex');
    const bad = await finished(
      (
        await submit({
          source: { type: 'file', path },
          algorithms: ['sha256', 'sha1'],
          expected: { sha256: wrong },
        })
      ).id,
    );
    expect(bad.status).toBe('failed');
    expect(bad.error?.code).toBe('DIGEST_MISMATCH');
    expect(bad.error?.details).toEqual({ sha256: { expected: wrong, actual: right } });
    expect(bad.digests?.sha1.hex).toBe(node('sha1').toString('hex'));
  });

  it('cancels a running job within a chunk: its checkpoint offset stays on record, its states go', async () => {
    // photonbeetlehash256 is the slowest family (a few MiB/s): the job is still running when cancel arrives.
    const slowPath = join(env.dataDir, 'slow.bin');
    await writeFile(slowPath, randomBytes(24 * MiB));
    const { id } = await submit({
      source: { type: 'file', path: slowPath },
      algorithms: ['photonbeetlehash256'],
    });
    await env.waitForJob(
      id,
      (row) => row.status === 'running' && row.checkpoint_offset > 0,
      worker,
    );

    const cancel = await http().post(`/v1/jobs/${id}/cancel`);
    expect([200, 202]).toContain(cancel.status);
    const job = await finished(id);
    expect(job.status).toBe('canceled');
    const row = await env.job(id);
    expect(row.checkpoint_offset).toBeGreaterThan(0);
    expect(row.checkpoint_offset).toBeLessThan(24 * MiB);
    expect((await env.states(id)).size).toBe(0);
    expect(worker.lines.some((line) => line.jobId === id && line.msg === 'canceled')).toBe(true);
  });
});
