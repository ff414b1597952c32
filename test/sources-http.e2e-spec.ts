/**
 * HTTP sources end to end: the API accepts/refuses http and s3 sources, and a
 * real worker hashes a URL served by a node:http server on 127.0.0.1 that
 * IGNORES Range. The worker is SIGKILLed mid-body; the next one asks for the
 * rest with Range + If-Range, gets the whole body again with 200, skips what is
 * already hashed, and the digest still equals Node's crypto. A second server
 * behaves like a URL signed for GET only (S3/GCS presigned, Azure SAS): HEAD is
 * refused with 403, GET honours Range, If-Range and If-Match; the job succeeds,
 * and an object replaced while its body is read fails with SOURCE_CHANGED.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { INestApplication } from '@nestjs/common';
import request from 'supertest';

import { createApiApp } from './helpers/api';
import { rangeBounds } from './helpers/http-range';
import { isCheckpoint, type JobRow, MiB, WorkerTestEnv } from './helpers/worker-process';

const SIZE = 40 * MiB;
const settings = {
  CHUNK_BYTES: String(2 * MiB),
  CHECKPOINT_BYTES: String(4 * MiB),
  CHECKPOINT_SECONDS: '3600',
  HASHQ_ALLOW_HOSTS: '127.0.0.1',
};

describe('HTTP source through the API and real workers', () => {
  const env = new WorkerTestEnv();
  let api: INestApplication;
  let server: Server;
  let base: string;
  let data: Buffer;
  let bytesPerSecond = 0;
  const gets: Array<{ range?: string; ifRange?: string }> = [];
  let signed: Server;
  let signedBase: string;
  /** The object behind the GET-only URL; replaceDuringRead swaps it once a whole-body GET has begun. */
  let object: { data: Buffer; etag: string };
  let replaceDuringRead: { data: Buffer; etag: string } | null = null;
  const signedMethods: string[] = [];

  beforeAll(async () => {
    data = randomBytes(SIZE);
    const etag = `"${createHash('md5').update(data).digest('hex')}"`;
    server = createServer((req, res) => {
      if (req.method === 'GET')
        gets.push({
          range: req.headers.range,
          ifRange: req.headers['if-range'] as string | undefined,
        });
      res.writeHead(200, { 'content-length': SIZE, etag }); // Range is never honoured
      if (req.method === 'HEAD') return void res.end();
      let at = 0;
      const pump = () => {
        while (at < SIZE) {
          const piece = data.subarray(at, Math.min(SIZE, at + 256 * 1024));
          at += piece.length;
          const more = res.write(piece);
          if (bytesPerSecond > 0)
            return void setTimeout(pump, Math.ceil((piece.length / bytesPerSecond) * 1000));
          if (!more) return void res.once('drain', pump);
        }
        res.end();
      };
      res.on('close', () => (at = SIZE + 1));
      pump();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    signed = createServer((req, res) => {
      signedMethods.push(req.method ?? '');
      if (req.method !== 'GET') {
        res.writeHead(403); // the signature covers GET only
        return void res.end();
      }
      const { data, etag } = object; // a body in flight keeps the version it started with
      const ifMatch = req.headers['if-match'];
      if (ifMatch && ifMatch !== etag) {
        res.writeHead(412);
        return void res.end();
      }
      const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
      const ifRange = req.headers['if-range'];
      if (!range || (ifRange && ifRange !== etag)) {
        res.writeHead(200, { 'content-length': data.length, etag, 'accept-ranges': 'bytes' });
        if (replaceDuringRead) [object, replaceDuringRead] = [replaceDuringRead, null];
        return void res.end(data);
      }
      const bounds = rangeBounds(range, data.length, res);
      if (!bounds) return;
      const { start, end, contentRange } = bounds;
      res.writeHead(206, {
        'content-range': contentRange,
        'content-length': end - start + 1,
        etag,
      });
      res.end(data.subarray(start, end + 1));
    });
    await new Promise<void>((resolve) => signed.listen(0, '127.0.0.1', resolve));
    signedBase = `http://127.0.0.1:${(signed.address() as AddressInfo).port}`;
    await env.setUp();
    // The API's allow list comes from the configuration it is given, like every setting.
    api = await createApiApp({
      ...env.env,
      env: { ...env.env.env, HASHQ_ALLOW_HOSTS: '127.0.0.1' },
    });
  });

  afterAll(async () => {
    await api?.close();
    await env.tearDown();
    for (const s of [server, signed]) {
      s.closeAllConnections();
      await new Promise((resolve) => s.close(resolve));
    }
  });

  it('accepts http and s3 sources in both forms; refuses forbidden addresses and malformed ones', async () => {
    const http = request(api.getHttpServer());
    const ok = await http
      .post('/v1/jobs')
      .send({ source: `${base}/a`, algorithms: ['sha256'] })
      .expect(202);
    expect(ok.body.source).toEqual({ type: 'http', url: `${base}/a` });
    const s3 = await http
      .post('/v1/jobs')
      .send({ source: 's3://my-bucket/dir/key%20x.bin', algorithms: ['sha256'] })
      .expect(202);
    expect(s3.body.source).toEqual({ type: 's3', bucket: 'my-bucket', key: 'dir/key x.bin' });
    await http
      .post('/v1/jobs')
      .send({
        source: { type: 's3', bucket: 'my-bucket', key: 'k', versionId: 'v1' },
        algorithms: ['md5'],
      })
      .expect(202);
    // Credentials in headers or the URL are stored for the worker but never shown.
    const secret = await http
      .post('/v1/jobs')
      .send({
        source: {
          type: 'http',
          url: `http://u:pw@127.0.0.1:1/x`,
          headers: { Authorization: 'Bearer t0ken' },
        },
        algorithms: ['md5'],
      })
      .expect(202);
    expect(secret.body.source).toEqual({
      type: 'http',
      url: 'http://u:***@127.0.0.1:1/x',
      headers: { Authorization: '***' },
    });
    const shown = await http.get(`/v1/jobs/${secret.body.id}`).expect(200);
    expect(JSON.stringify(shown.body)).not.toMatch(/t0ken|:pw@/);
    const stored = await env.db.query(`SELECT source FROM jobs WHERE id = $1`, [secret.body.id]);
    expect(stored.rows[0].source.headers).toEqual({ Authorization: 'Bearer t0ken' });
    for (const url of [
      'http://10.0.0.1/x',
      'http://169.254.169.254/latest/meta-data/',
      'http://[::1]/x',
      'http://127.0.0.2/x',
    ]) {
      const refused = await http
        .post('/v1/jobs')
        .send({ source: url, algorithms: ['sha256'] })
        .expect(403);
      expect(refused.body.error.code).toBe('SOURCE_ADDRESS_FORBIDDEN');
    }
    for (const source of [
      { type: 'http', url: 'ftp://example.com/x' },
      { type: 'http', url: 'http://example.com/x', headers: { 'bad header': 'x' } },
      { type: 's3', bucket: 'B!', key: 'k' },
      { type: 's3', bucket: 'ok-bucket', key: '' },
      { type: 's3', bucket: 'ok-bucket', key: 'k', extra: 1 },
      's3://only-bucket',
    ]) {
      const bad = await http
        .post('/v1/jobs')
        .send({ source, algorithms: ['sha256'] })
        .expect(400);
      expect(bad.body.error.code).toBe('INVALID_SOURCE');
    }
    // Keep the worker below to its own job: these were only about validation.
    await env.db.query(
      `UPDATE jobs SET status = 'canceled', finished_at = now() WHERE status = 'queued'`,
    );
  });

  it('a server that ignores Range: worker killed mid-body, the resumed job skips the hashed bytes, digest right', async () => {
    const submitted = await request(api.getHttpServer())
      .post('/v1/jobs')
      .send({ source: { type: 'http', url: `${base}/big.bin` }, algorithms: ['sha256', 'md5'] })
      .expect(202);
    const id = submitted.body.id as string;
    bytesPerSecond = 16 * MiB;
    const first = env.startWorker(settings);
    await first.waitForLog((line) => line.jobId === id && isCheckpoint(8 * MiB)(line), 60_000);
    first.kill('SIGKILL');
    await first.exited;
    await env.waitForWorkerSessionsGone();
    const crashed = await env.job(id);
    expect(crashed.checkpoint_offset).toBeGreaterThanOrEqual(8 * MiB);

    gets.length = 0;
    bytesPerSecond = 0;
    const second = env.startWorker(settings);
    const done = await env.waitForJob(
      id,
      (job) => job.status !== 'queued' && job.status !== 'running',
      second,
      60_000,
    );
    await second.stop();
    expect(done.status).toBe('succeeded');
    expect(done.digests?.sha256.hex).toBe(createHash('sha256').update(data).digest('hex'));
    expect(done.digests?.md5.hex).toBe(createHash('md5').update(data).digest('hex'));
    expect(done.resumes).toBeGreaterThanOrEqual(1);
    expect(done.total_bytes).toBe(SIZE);
    // The second attempt read the whole body (the skipped prefix counts): bytesRead shows the re-read.
    expect(done.bytes_read).toBe(crashed.bytes_read + SIZE);
    // The resume asked for the rest, pinned by the ETag; the server answered with everything.
    expect(gets[0].range).toBe(`bytes=${crashed.checkpoint_offset}-`);
    expect(gets[0].ifRange).toMatch(/^"[0-9a-f]{32}"$/);
  });

  describe('a URL signed for GET only (HEAD answered 403)', () => {
    const url = () => `${signedBase}/bucket/object.bin?X-Amz-Signature=0123abcd`;
    const version = (data: Buffer) => ({
      data,
      etag: `"${createHash('md5').update(data).digest('hex')}"`,
    });

    async function run(): Promise<JobRow> {
      const submitted = await request(api.getHttpServer())
        .post('/v1/jobs')
        .send({ source: url(), algorithms: ['sha256'] })
        .expect(202);
      const worker = env.startWorker(settings);
      const ended = (job: JobRow) => job.status !== 'queued' && job.status !== 'running';
      const done = await env.waitForJob(submitted.body.id, ended, worker);
      await worker.stop();
      return done;
    }

    it('the job succeeds; its digest equals Node crypto of the bytes', async () => {
      const bytes = randomBytes(9 * MiB + 5);
      object = version(bytes);
      signedMethods.length = 0;
      const done = await run();
      expect([done.status, done.error_code]).toEqual(['succeeded', null]);
      expect(done.digests?.sha256.hex).toBe(createHash('sha256').update(bytes).digest('hex'));
      expect(done.total_bytes).toBe(bytes.length);
      expect(signedMethods).not.toContain('HEAD');
    });

    it('the object replaced while its body is read → SOURCE_CHANGED, no digest', async () => {
      const before = randomBytes(9 * MiB + 5);
      const after = Buffer.from(before);
      after[0] ^= 1;
      object = version(before);
      replaceDuringRead = version(after);
      const done = await run();
      expect(replaceDuringRead).toBeNull(); // the swap happened, during the job's read
      expect([done.status, done.error_code]).toEqual(['failed', 'SOURCE_CHANGED']);
      expect(done.digests).toBeNull();
    });
  });
});
