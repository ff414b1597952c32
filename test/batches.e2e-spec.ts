/**
 * Directory batches end to end: HTTP → API (in process) → PostgreSQL + BullMQ → a real worker
 * process → the report, checked by coreutils' `sha256sum -c` run in the directory and by Node's
 * crypto item by item.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

import type { INestApplication } from '@nestjs/common';

import { createApiApp } from './helpers/api';
import { AWKWARD_NAMES, BatchClient, sha256, writeTree } from './helpers/batches';
import { type WorkerProcess, WorkerTestEnv } from './helpers/worker-process';

const run = promisify(execFile);

describe('directory batches through the API and a real worker', () => {
  const env = new WorkerTestEnv();
  let app: INestApplication;
  let worker: WorkerProcess;
  let client: BatchClient;

  beforeAll(async () => {
    await env.setUp();
    app = await createApiApp(env.env);
    // Small groups (several per batch) and a small threshold (a 300 KiB file runs as a job).
    worker = env.startWorker({
      BATCH_GROUP_SIZE: '4',
      BATCH_SMALL_ITEM_BYTES: String(256 * 1024),
      BATCH_MAX_ITEMS: '100',
    });
    await worker.waitForLog((line) => line.msg === 'worker started');
    client = new BatchClient(app, () => [worker]);
  });

  afterAll(async () => {
    await worker?.stop();
    await app?.close();
    await env.tearDown();
  });

  it('hashes a tree with awkward names; `sha256sum -c` of the report passes in the directory', async () => {
    const files: Record<string, Buffer> = {};
    AWKWARD_NAMES.forEach((name, i) => (files[name] = randomBytes(1000 + i * 37)));
    files['empty file'] = Buffer.alloc(0);
    files['big/one.bin'] = randomBytes(300 * 1024); // above the threshold: an ordinary job
    const dir = await writeTree(join(env.dataDir, 'tree'), files);

    const submitted = await client.submit({
      source: { type: 'directory', path: dir },
      algorithms: ['sha256', 'sha1'],
    });
    expect(submitted.status).toBe('queued');
    const batch = await client.ended(submitted.id);
    const count = Object.keys(files).length;
    expect(batch.status).toBe('succeeded');
    expect(batch.items).toMatchObject({
      total: count,
      listed: count,
      done: count,
      succeeded: count,
    });
    expect(batch.bytes.done).toBe(Object.values(files).reduce((n, b) => n + b.length, 0));

    const items = await client.items(submitted.id);
    expect(items.map((item) => item.name).sort()).toEqual(Object.keys(files).sort());
    for (const item of items) {
      expect(item.digests!.sha256.hex).toBe(sha256(files[item.name]));
      expect(item.digests!.sha256.base64).toBe(
        Buffer.from(sha256(files[item.name]), 'hex').toString('base64'),
      );
      expect(item.size).toBe(files[item.name].length);
    }
    expect(items.find((item) => item.name === 'big/one.bin')!.jobId).not.toBeNull();

    const report = await client.report(submitted.id, 'sha256sum');
    await writeFile(join(env.dataDir, 'report.sha256'), report);
    const { stdout } = await run(
      'sha256sum',
      ['-c', '--strict', join(env.dataDir, 'report.sha256')],
      {
        cwd: dir,
      },
    );
    expect(stdout.split('\n').filter((line) => line.endsWith(': OK'))).toHaveLength(count);

    // the BSD tag format, read back by the same tool
    const bsd = await client.report(submitted.id, 'bsd');
    expect(bsd.toString('utf8')).toContain('SHA256 (plain.txt) = ');
    await writeFile(join(env.dataDir, 'report.bsd'), bsd);
    const { stdout: bsdOut } = await run(
      'sha256sum',
      ['-c', '--strict', join(env.dataDir, 'report.bsd')],
      {
        cwd: dir,
      },
    );
    expect(bsdOut.split('\n').filter((line) => line.endsWith(': OK'))).toHaveLength(count);
    // sha1 in the sha256sum format, checked by sha1sum
    await writeFile(
      join(env.dataDir, 'report.sha1'),
      await client.report(submitted.id, 'sha256sum', 'sha1'),
    );
    await run('sha1sum', ['-c', '--strict', join(env.dataDir, 'report.sha1')], { cwd: dir });
    // jsonl: one object per item; csv: S3 completion-report columns plus one per digest
    const jsonl = (await client.report(submitted.id, 'jsonl'))
      .toString('utf8')
      .split('\n')
      .filter(Boolean);
    expect(jsonl).toHaveLength(count);
    const csv = (await client.report(submitted.id, 'csv')).toString('utf8');
    expect(csv.split('\r\n')[0]).toMatch(
      /^Bucket,Key,VersionId,TaskStatus,ErrorCode,HTTPStatusCode,ResultMessage,/,
    );
    await client
      .http()
      .get(`/v1/batches/${submitted.id}/report`)
      .query({ algorithm: 'md5' })
      .expect(400);
  });

  it('verifies a SUM file: exactly the planted mismatches are reported, the rest succeed', async () => {
    const files: Record<string, Buffer> = {};
    for (let i = 0; i < 20; i++) files[`v/f ${i}.txt`] = randomBytes(200 + i);
    files['v/new\nline'] = randomBytes(64);
    const dir = await writeTree(join(env.dataDir, 'verify'), files);
    // sha256sum's own output is the SUM file (its escaping of the awkward name included)
    const { stdout: sums } = await run(
      'bash',
      ['-c', 'find . -type f -print0 | xargs -0 sha256sum'],
      {
        cwd: dir,
      },
    );
    const planted = ['./v/f 3.txt', './v/f 11.txt', './v/new\nline'];
    for (const name of planted) {
      await writeFile(join(dir, name.replace('\\n', '\n')), randomBytes(10)); // changed since summed
    }
    const { id } = await client.submit({
      source: { type: 'sums', base: dir, content: sums },
      algorithms: ['sha256'],
    });
    const batch = await client.ended(id);
    expect(batch.status).toBe('completed_with_failures');
    expect(batch.items).toMatchObject({ total: 21, succeeded: 18, mismatched: 3, failed: 0 });
    expect(batch.errors).toEqual({ DIGEST_MISMATCH: 3 });
    const mismatched = await client.items(id, 'mismatch');
    expect(mismatched.map((item) => item.name).sort()).toEqual([
      './v/f 11.txt',
      './v/f 3.txt',
      './v/new\nline',
    ]);
  });

  it('refuses an inline SUM file with a bad line (400, its number); by ref only that line fails', async () => {
    const dir = await writeTree(join(env.dataDir, 'sumref'), {
      'a.txt': Buffer.from('a'),
      'b.txt': Buffer.from('b'),
    });
    const content = `${sha256(Buffer.from('a'))}  a.txt\nnot a checksum line\n${sha256(Buffer.from('b'))}  b.txt\n`;
    const res = await client
      .http()
      .post('/v1/batches')
      .send({ source: { type: 'sums', base: dir, content }, algorithms: ['sha256'] });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('MANIFEST_LINE_INVALID');
    expect(res.body.error.details.line).toBe(2);

    const ref = join(env.dataDir, 'sums.txt');
    await writeFile(ref, content);
    const batch = await client.ended(
      (await client.submit({ source: { type: 'sums', base: dir, ref }, algorithms: ['sha256'] }))
        .id,
    );
    expect(batch.status).toBe('completed_with_failures');
    expect(batch.items).toMatchObject({ total: 3, succeeded: 2, failed: 1 });
    const [bad] = await client.items(batch.id, 'failed');
    expect(bad.line).toBe(2);
    expect(bad.error!.code).toBe('MANIFEST_LINE_INVALID');
  });

  it('an empty directory succeeds with 0 items', async () => {
    const dir = join(env.dataDir, 'empty');
    await mkdir(dir);
    const batch = await client.ended(
      (await client.submit({ source: { type: 'directory', path: dir }, algorithms: ['sha256'] }))
        .id,
    );
    expect(batch.status).toBe('succeeded');
    expect(batch.items).toMatchObject({ total: 0, done: 0 });
    expect((await client.report(batch.id, 'sha256sum')).length).toBe(0);
  });

  it('a missing directory fails the batch with SOURCE_NOT_FOUND', async () => {
    const batch = await client.ended(
      (
        await client.submit({
          source: { type: 'directory', path: join(env.dataDir, 'nope') },
          algorithms: ['sha256'],
        })
      ).id,
    );
    expect(batch.status).toBe('failed');
    expect(batch.error!.code).toBe('SOURCE_NOT_FOUND');
  });

  it('refuses bad sources before anything runs', async () => {
    const bad = async (source: unknown, status: number, code: string) => {
      const res = await client
        .http()
        .post('/v1/batches')
        .send({ source, algorithms: ['sha256'] });
      expect({ status: res.status, code: res.body.error?.code }).toEqual({ status, code });
    };
    await bad({ type: 'directory', path: '/etc' }, 403, 'PATH_OUTSIDE_ROOTS');
    await bad({ type: 'directory', path: 'relative' }, 400, 'INVALID_SOURCE');
    await bad({ type: 'directory', path: env.dataDir, extra: 1 }, 400, 'INVALID_SOURCE');
    await bad({ type: 'ftp' }, 400, 'INVALID_SOURCE');
    await bad({ type: 's3', bucket: 'B!' }, 400, 'INVALID_SOURCE');
    const res = await client
      .http()
      .post('/v1/batches')
      .send({ source: { type: 'directory', path: env.dataDir }, algorithms: ['nope'] });
    expect(res.body.error.code).toBe('UNKNOWN_ALGORITHM');
  });

  it('enforces the limits: items per batch, inline manifest size, batches at once', async () => {
    const files: Record<string, Buffer> = {};
    for (let i = 0; i < 101; i++) files[`f${i}`] = Buffer.from(String(i));
    const dir = await writeTree(join(env.dataDir, 'too-many'), files);
    const tooMany = await client.ended(
      (await client.submit({ source: { type: 'directory', path: dir }, algorithms: ['sha256'] }))
        .id,
    );
    expect(tooMany.status).toBe('failed');
    expect(tooMany.error!.code).toBe('BATCH_TOO_LARGE');

    const limited = await createApiApp({
      ...env.env,
      env: { ...env.env.env, BATCH_MAX_ACTIVE: '1', BATCH_MANIFEST_MAX_BYTES: '1024' },
    });
    try {
      const http = () => new BatchClient(limited).http();
      const big = await http()
        .post('/v1/batches')
        .send({
          source: { type: 'manifest', content: '/x\n'.repeat(400) },
          algorithms: ['sha256'],
        });
      expect({ status: big.status, code: big.body.error?.code }).toEqual({
        status: 413,
        code: 'PAYLOAD_TOO_LARGE',
      });
      // one batch queued (a row no worker is told about): the next one is refused
      const { rows } = await env.db.query<{ id: string }>(
        `INSERT INTO batches (status, source, algorithms) VALUES ('queued', '{"type":"directory"}', '{sha256}') RETURNING id`,
      );
      const refused = await http()
        .post('/v1/batches')
        .send({ source: { type: 'directory', path: dir }, algorithms: ['sha256'] });
      expect({ status: refused.status, code: refused.body.error?.code }).toEqual({
        status: 429,
        code: 'BATCH_LIMIT_REACHED',
      });
      const canceled = await http().post(`/v1/batches/${rows[0].id}/cancel`).expect(200);
      expect(canceled.body.status).toBe('canceled');
      await http().post(`/v1/batches/${rows[0].id}/cancel`).expect(200);
      await http().post(`/v1/batches/${tooMany.id}/cancel`).expect(409);
    } finally {
      await limited.close();
    }
  });

  it('retries the failed items of a batch: they run again, the others keep their result', async () => {
    const dir = await writeTree(join(env.dataDir, 'retry'), { 'ok.txt': Buffer.from('ok') });
    const content = `${sha256(Buffer.from('ok'))}  ok.txt\n${sha256(Buffer.from('later'))}  later.txt\n`;
    const first = await client.ended(
      (
        await client.submit({
          source: { type: 'sums', base: dir, content },
          algorithms: ['sha256'],
        })
      ).id,
    );
    expect(first.status).toBe('completed_with_failures');
    expect(first.errors).toEqual({ SOURCE_NOT_FOUND: 1 });
    await writeFile(join(dir, 'later.txt'), 'later'); // the missing file arrives
    await client.http().post(`/v1/batches/${first.id}/retry`).expect(202);
    const again = await client.ended(first.id);
    expect(again.status).toBe('succeeded');
    expect(again.items).toMatchObject({ total: 2, succeeded: 2, failed: 0 });
    await client.http().post(`/v1/batches/${first.id}/retry`).expect(409);
  });

  it('replays an Idempotency-Key, lists batches in pages and hides unknown ids', async () => {
    const dir = await writeTree(join(env.dataDir, 'idem'), { a: Buffer.from('a') });
    const body = { source: { type: 'directory', path: dir }, algorithms: ['sha256'] };
    const first = await client.submit(body, 'key-1');
    const again = await client.submit(body, 'key-1');
    expect(again.id).toBe(first.id);
    const conflict = await client
      .http()
      .post('/v1/batches')
      .set('Idempotency-Key', 'key-1')
      .send({ ...body, algorithms: ['sha1'] });
    expect(conflict.status).toBe(409);
    await client.ended(first.id);

    const page1 = await client.http().get('/v1/batches').query({ limit: 2 }).expect(200);
    expect(page1.body.items).toHaveLength(2);
    const page2 = await client
      .http()
      .get('/v1/batches')
      .query({ limit: 2, cursor: page1.body.nextCursor })
      .expect(200);
    expect(page2.body.items[0].id).not.toBe(page1.body.items[1].id);
    await client.http().get('/v1/batches/6e0f6a47-3b0a-4f57-9d1c-3b7a4e7f0c11').expect(404);
    await client.http().get('/v1/batches/not-a-uuid').expect(404);
  });
});
