/**
 * S3 and manifest batches end to end against a real S3-compatible server (s3rver in a child
 * process: listings longer than one S3 page), digests checked against Node's crypto. Manifest
 * lines of unknown size (s3:// keys, URLs) are hashed in groups; those whose response shows them
 * big run as jobs.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { INestApplication } from '@nestjs/common';

import { createApiApp } from './helpers/api';
import { BatchClient, sha256 } from './helpers/batches';
import { rangeBounds } from './helpers/http-range';
import { type S3ServerProcess, startS3ServerProcess } from './helpers/s3-server-process';
import { type WorkerProcess, WorkerTestEnv } from './helpers/worker-process';

const BUCKET = 'batch-bucket';
const OBJECTS = 2100; // three ListObjectsV2 pages of 1000
// S3's longest key: 1024 bytes (UTF-8), in folders (s3rver stores a key as a file path)
const LONG_KEY = `pre/${Array.from({ length: 5 }, (_, i) => `${i}`.repeat(199)).join('/')}${'é'.repeat(10)}x`;

// The machine is shared: whole batches through real processes get generous time.
const TIMEOUT = 300_000;
/** BATCH_SMALL_ITEM_BYTES of the suite: objects from this size up run as jobs. */
const SMALL_ITEM_BYTES = 64 * 1024;

describe('S3 and manifest batches', () => {
  const env = new WorkerTestEnv();
  let app: INestApplication;
  let worker: WorkerProcess;
  let client: BatchClient;
  let s3: S3ServerProcess;
  let s3Dir: string;
  let s3Client: S3Client;
  const objects = new Map<string, Buffer>();

  beforeAll(async () => {
    await env.setUp();
    s3Dir = await mkdtemp(join(tmpdir(), 'hashq-batch-s3-'));
    s3 = await startS3ServerProcess(s3Dir, [BUCKET]);
    const s3Env = {
      HASHQ_ALLOW_HOSTS: '127.0.0.1',
      S3_ENDPOINT: s3.endpoint,
      S3_FORCE_PATH_STYLE: 'true',
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
    };
    s3Client = new S3Client({
      endpoint: s3.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    const keys: string[] = [];
    for (let i = 0; i < OBJECTS; i++) keys.push(`pre/${String(i).padStart(5, '0')}.bin`);
    keys.push('pre/with space.txt', 'pre/ünïcødé ✓.txt', 'pre/back\\slash', 'other/outside.bin');
    keys.push(LONG_KEY);
    const queue = [...keys];
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let key = queue.shift(); key !== undefined; key = queue.shift()) {
          const body = randomBytes(16 + (key.length % 200));
          objects.set(key, body);
          await s3Client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
        }
      }),
    );
    app = await createApiApp({ ...env.env, env: { ...env.env.env, ...s3Env } });
    worker = env.startWorker({
      ...s3Env,
      BATCH_GROUP_SIZE: '300',
      BATCH_SMALL_ITEM_BYTES: String(SMALL_ITEM_BYTES),
    });
    await worker.waitForLog((line) => line.msg === 'worker started');
    client = new BatchClient(app, () => [worker]);
  }, 180_000);

  afterAll(async () => {
    await worker?.stop();
    await app?.close();
    s3Client?.destroy();
    await s3?.stop();
    await rm(s3Dir, { recursive: true, force: true });
    await env.tearDown();
  });

  it(
    'hashes every object under a prefix over several listing pages, equal to Node crypto',
    async () => {
      const { id } = await client.submit({
        source: { type: 's3', bucket: BUCKET, prefix: 'pre/' },
        algorithms: ['sha256', 'md5'],
      });
      const batch = await client.ended(id, 120_000);
      const expected = [...objects.keys()].filter((key) => key.startsWith('pre/'));
      expect(batch.status).toBe('succeeded');
      expect(batch.items).toMatchObject({ total: expected.length, succeeded: expected.length });
      const items = await client.items(id);
      expect(items.map((item) => `pre/${item.name}`).sort()).toEqual(expected.sort());
      for (const item of items) {
        const body = objects.get(`pre/${item.name}`)!;
        expect(item.digests!.sha256.hex).toBe(sha256(body));
        expect(item.digests!.md5.hex).toBe(createHash('md5').update(body).digest('hex'));
      }
      const report = (await client.report(id, 'sha256sum')).toString('utf8');
      expect(report.split('\n').filter(Boolean)).toHaveLength(expected.length);
      expect(report).toContain(`  ${LONG_KEY.slice('pre/'.length)}\n`); // the 1024-byte key, exactly
    },
    TIMEOUT,
  );

  it(
    'verify "s3" runs every object as a job comparing with the checksums S3 stores',
    async () => {
      const { id } = await client.submit({
        source: { type: 's3', bucket: BUCKET, prefix: 'pre/0001' },
        algorithms: ['sha256'],
        verify: 's3',
      });
      const batch = await client.ended(id, 120_000);
      expect(batch.status).toBe('succeeded');
      const items = await client.items(id);
      expect(items).toHaveLength(10);
      for (const item of items) {
        expect(item.jobId).not.toBeNull();
        expect(item.digests!.sha256.hex).toBe(sha256(objects.get(`pre/0001${item.name}`)!));
      }
    },
    TIMEOUT,
  );

  it(
    'a missing bucket fails the batch with SOURCE_NOT_FOUND; an empty prefix succeeds with 0',
    async () => {
      const missing = await client.ended(
        (
          await client.submit({
            source: { type: 's3', bucket: 'no-such-bucket' },
            algorithms: ['sha256'],
          })
        ).id,
      );
      expect(missing.status).toBe('failed');
      expect(missing.error!.code).toBe('SOURCE_NOT_FOUND');
      const empty = await client.ended(
        (
          await client.submit({
            source: { type: 's3', bucket: BUCKET, prefix: 'nothing-here/' },
            algorithms: ['sha256'],
          })
        ).id,
      );
      expect(empty.status).toBe('succeeded');
      expect(empty.items.total).toBe(0);
    },
    TIMEOUT,
  );

  it(
    'hashes an inline S3 Batch Operations CSV manifest (URL-encoded keys)',
    async () => {
      const big = randomBytes(SMALL_ITEM_BYTES * 3);
      objects.set('big/large.bin', big);
      await s3Client.send(
        new PutObjectCommand({ Bucket: BUCKET, Key: 'big/large.bin', Body: big }),
      );
      const keys = [
        'pre/00001.bin',
        'pre/with space.txt',
        'big/large.bin',
        'pre/ünïcødé ✓.txt',
        'other/outside.bin',
      ];
      const content = keys.map((key) => `${BUCKET},${encodeURIComponent(key)}`).join('\n') + '\n';
      const { id } = await client.submit({
        source: { type: 'manifest', format: 'csv', content },
        algorithms: ['sha256'],
      });
      const batch = await client.ended(id, 60_000);
      expect(batch.status).toBe('succeeded');
      const items = await client.items(id);
      expect(items.map((item) => item.line)).toEqual([1, 2, 3, 4, 5]);
      items.forEach((item, i) =>
        expect(item.digests!.sha256.hex).toBe(sha256(objects.get(keys[i])!)),
      );
      // Listed without sizes: the small ones hashed in the group, the big one promoted to a job.
      expect(items.map((item) => item.jobId !== null)).toEqual([false, false, true, false, false]);
      expect(items[2].size).toBe(big.length);
    },
    TIMEOUT,
  );

  it(
    'hashes small URLs of a manifest in groups and promotes big ones to jobs, length told or not',
    async () => {
      const bodies: Record<string, Buffer> = {
        '/small': randomBytes(1000),
        '/small-chunked': randomBytes(3000),
        '/big': randomBytes(SMALL_ITEM_BYTES * 3),
        '/big-chunked': randomBytes(SMALL_ITEM_BYTES * 3),
      };
      const server: Server = createServer((req, res) => {
        const data = bodies[req.url ?? ''];
        if (!data) return void res.writeHead(404).end();
        const etag = `"${sha256(data).slice(0, 16)}"`;
        // "-chunked": a whole body comes without Content-Length, in chunks of unknown total.
        const length = req.url!.endsWith('-chunked') ? {} : { 'content-length': data.length };
        const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
        const bounds = range && rangeBounds(range, data.length, res);
        if (range && !bounds) return;
        if (bounds) {
          res.writeHead(206, {
            etag,
            'content-range': bounds.contentRange,
            'content-length': bounds.end - bounds.start + 1,
          });
          return void res.end(
            req.method === 'HEAD' ? undefined : data.subarray(bounds.start, bounds.end + 1),
          );
        }
        res.writeHead(200, { etag, 'accept-ranges': 'bytes', ...length });
        if (req.method === 'HEAD') return void res.end();
        for (let at = 0; at < data.length; at += 16 * 1024)
          res.write(data.subarray(at, at + 16 * 1024));
        res.end();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        const paths = Object.keys(bodies);
        const { id } = await client.submit({
          source: {
            type: 'manifest',
            format: 'lines',
            content: paths.map((p) => base + p).join('\n'),
          },
          algorithms: ['sha256'],
        });
        const batch = await client.ended(id, 60_000);
        const items = await client.items(id);
        expect({ status: batch.status, errors: items.map((item) => item.error) }).toEqual({
          status: 'succeeded',
          errors: [null, null, null, null],
        });
        items.forEach((item, i) => expect(item.digests!.sha256.hex).toBe(sha256(bodies[paths[i]])));
        expect(items.map((item) => item.jobId !== null)).toEqual([false, false, true, true]);
        const jobs = await env.db.query<{ id: string }>(
          `SELECT id FROM jobs WHERE id = ANY($1) AND status = 'succeeded'`,
          [items.map((item) => item.jobId).filter(Boolean)],
        );
        expect(jobs.rows).toHaveLength(2);
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    },
    TIMEOUT,
  );

  it(
    'refuses an inline manifest with a bad line: 400 with its line number, nothing runs',
    async () => {
      const before = await env.db.query(`SELECT count(*)::int AS n FROM batches`);
      const res = await client
        .http()
        .post('/v1/batches')
        .send({
          source: {
            type: 'manifest',
            format: 'csv',
            content: `${BUCKET},pre/00001.bin\n${BUCKET},pre/00002.bin\nnot-a-bucket-line\n`,
          },
          algorithms: ['sha256'],
        });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('MANIFEST_LINE_INVALID');
      expect(res.body.error.details.line).toBe(3);
      expect(res.body.error.message).toContain('line 3');
      const after = await env.db.query(`SELECT count(*)::int AS n FROM batches`);
      expect(after.rows[0].n).toBe(before.rows[0].n);
    },
    TIMEOUT,
  );
});
