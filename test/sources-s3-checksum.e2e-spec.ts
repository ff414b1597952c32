/**
 * The job option s3Checksum through the API and real worker processes, against
 * s3rver (filesystem-backed, 127.0.0.1). s3rver keeps neither part layouts nor
 * checksums, so a loopback proxy (helpers/s3-layout-proxy) answers
 * `HEAD ?partNumber=n` and adds `x-amz-checksum-*` headers the way S3 does,
 * with values this test computes itself (node:crypto, zlib.crc32): the
 * independent oracle. Checked: single-part and multipart forms (composite
 * sha256/sha1/crc32, multipart ETag for md5, full-object crc64nvme/crc32), a
 * stored checksum that matches (verified) or not (S3_CHECKSUM_MISMATCH), a
 * worker killed mid-object (the resumed job keeps the pinned parts and the
 * per-part states), and the 400 cases.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as zlib from 'node:zlib';

import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';

import { createApiApp } from './helpers/api';
import { type S3LayoutProxy, startS3LayoutProxy } from './helpers/s3-layout-proxy';
import { startS3Server, type TestS3Server } from './helpers/s3-server';
import { isCheckpoint, MiB, type WorkerProcess, WorkerTestEnv } from './helpers/worker-process';

const BUCKET = 'hashq-s3sum';

interface S3Form {
  value: string;
  type: string;
  parts: number | null;
  verified: boolean | null;
  stored?: string;
}
interface JobBody {
  id: string;
  status: string;
  digests: Record<string, { hex: string; base64: string }> | null;
  s3Checksum?: Record<string, S3Form> | null;
  error: { code: string; message: string; details?: unknown } | null;
  resumes: number;
  attempts: number;
}

// ---- the oracle: S3's checksum forms computed here, independently of the worker ----
const zlibCrc32 = (zlib as unknown as { crc32?: (data: Buffer) => number }).crc32;
function crc32(data: Buffer): Buffer {
  if (!zlibCrc32) throw new Error('this Node has no zlib.crc32 (Node >= 20.15 needed)');
  const out = Buffer.alloc(4);
  out.writeUInt32BE(zlibCrc32(data) >>> 0);
  return out;
}
const digest = (algorithm: string, data: Buffer): Buffer =>
  algorithm === 'crc32' ? crc32(data) : createHash(algorithm).update(data).digest();
function split(data: Buffer, sizes: number[]): Buffer[] {
  let at = 0;
  return sizes.map((size) => data.subarray(at, (at += size)));
}
/** base64(H(H(part 1) || … || H(part N)))-N */
function composite(algorithm: string, data: Buffer, sizes: number[]): string {
  const raw = Buffer.concat(split(data, sizes).map((part) => digest(algorithm, part)));
  return `${digest(algorithm, raw).toString('base64')}-${sizes.length}`;
}
/** The multipart ETag: hex(md5(md5(part 1) || … ))-N */
function multipartEtag(data: Buffer, sizes: number[]): string {
  const raw = Buffer.concat(split(data, sizes).map((part) => digest('md5', part)));
  return `${digest('md5', raw).toString('hex')}-${sizes.length}`;
}

describe('job option s3Checksum (S3 checksum forms, multipart)', () => {
  const env = new WorkerTestEnv();
  let dir: string;
  let s3: TestS3Server;
  let proxy: S3LayoutProxy;
  let admin: S3Client;
  let app: INestApplication;
  let worker: WorkerProcess | undefined;
  let remoteEnv: Record<string, string>;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hashq-s3sum-'));
    s3 = await startS3Server(dir, [BUCKET]);
    proxy = await startS3LayoutProxy(s3.endpoint);
    await env.setUp();
    app = await createApiApp(env.env);
    admin = new S3Client({
      endpoint: s3.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    remoteEnv = {
      // Chunks of 3 MiB: part boundaries (5 MiB, 7 MiB, …) fall inside chunks.
      CHUNK_BYTES: String(3 * MiB),
      CHECKPOINT_BYTES: String(6 * MiB),
      CHECKPOINT_SECONDS: '3600',
      HASHQ_ALLOW_HOSTS: '127.0.0.1',
      S3_ENDPOINT: proxy.endpoint,
      S3_FORCE_PATH_STYLE: 'true',
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
    };
  });
  afterAll(async () => {
    await worker?.stop();
    await app?.close();
    await env.tearDown();
    admin?.destroy();
    await proxy?.stop();
    await s3?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  function ensureWorker(): void {
    if (!worker?.running) worker = env.startWorker(remoteEnv);
  }

  async function put(key: string, data: Buffer): Promise<string> {
    const out = await admin.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: data }));
    return out.ETag!;
  }

  /** A real multipart upload (s3rver joins the parts and forgets them; the proxy remembers). */
  async function putMultipart(key: string, data: Buffer, sizes: number[]): Promise<string> {
    const { UploadId } = await admin.send(
      new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: key }),
    );
    const parts = [];
    for (const [index, part] of split(data, sizes).entries()) {
      const out = await admin.send(
        new UploadPartCommand({
          Bucket: BUCKET,
          Key: key,
          UploadId,
          PartNumber: index + 1,
          Body: part,
        }),
      );
      parts.push({ PartNumber: index + 1, ETag: out.ETag });
    }
    const done = await admin.send(
      new CompleteMultipartUploadCommand({
        Bucket: BUCKET,
        Key: key,
        UploadId,
        MultipartUpload: { Parts: parts },
      }),
    );
    return done.ETag!;
  }

  async function submit(body: Record<string, unknown>): Promise<JobBody> {
    const res = await http().post('/v1/jobs').send(body);
    if (res.status !== 202)
      throw new Error(`submit answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body as JobBody;
  }

  async function finished(id: string, timeoutMs = 60_000): Promise<JobBody> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { body } = await http().get(`/v1/jobs/${id}`).expect(200);
      if (['succeeded', 'failed', 'canceled'].includes(body.status)) return body as JobBody;
      if (Date.now() > deadline)
        throw new Error(`job ${id} not finished: ${JSON.stringify(body)}\n${worker?.tail()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it('single-part object: base64 of the full digests, md5 = the ETag, stored sha256 verified', async () => {
    const data = randomBytes(3 * MiB + 5);
    const etag = await put('single.bin', data);
    proxy.objects.set(`/${BUCKET}/single.bin`, {
      etag,
      size: data.length,
      checksumHeaders: {
        'x-amz-checksum-sha256': digest('sha256', data).toString('base64'),
        'x-amz-checksum-type': 'FULL_OBJECT',
      },
    });
    ensureWorker();
    const job = await submit({
      source: `s3://${BUCKET}/single.bin`,
      algorithms: ['sha256', 'sha1', 'md5', 'crc32', 'crc64nvme', 'sha512'],
      s3Checksum: true,
    });
    expect(job.s3Checksum).toBeNull(); // asked for, not there yet
    const done = await finished(job.id);
    expect(done.status).toBe('succeeded');
    expect(done.digests?.sha256).toEqual({
      hex: digest('sha256', data).toString('hex'),
      base64: digest('sha256', data).toString('base64'),
    });
    expect(done.s3Checksum).toEqual({
      sha256: {
        value: digest('sha256', data).toString('base64'),
        type: 'FULL_OBJECT',
        parts: null,
        verified: true,
        stored: digest('sha256', data).toString('base64'),
      },
      sha1: {
        value: digest('sha1', data).toString('base64'),
        type: 'FULL_OBJECT',
        parts: null,
        verified: null,
      },
      md5: {
        value: digest('md5', data).toString('hex'),
        type: 'FULL_OBJECT',
        parts: null,
        verified: true, // s3rver's ETag of a single PUT is the MD5
        stored: digest('md5', data).toString('hex'),
      },
      crc32: {
        value: crc32(data).toString('base64'),
        type: 'FULL_OBJECT',
        parts: null,
        verified: null,
      },
      // No crc64nvme in node:crypto: the form is the base64 of the job's own digest.
      crc64nvme: {
        value: done.digests?.crc64nvme.base64,
        type: 'FULL_OBJECT',
        parts: null,
        verified: null,
      },
    });
    expect(proxy.checksumHeads.get(`/${BUCKET}/single.bin`)).toBeGreaterThanOrEqual(1);
  });

  it('multipart upload (3 parts, boundaries inside chunks): composite forms, multipart ETag, stored composite verified', async () => {
    const sizes = [5 * MiB, 5 * MiB + 3, 2 * MiB + 7];
    const data = randomBytes(sizes.reduce((a, b) => a + b, 0));
    const etag = await putMultipart('multi.bin', data, sizes);
    proxy.objects.set(`/${BUCKET}/multi.bin`, {
      etag,
      size: data.length,
      partSizes: sizes,
      checksumHeaders: {
        'x-amz-checksum-sha256': composite('sha256', data, sizes),
        'x-amz-checksum-type': 'COMPOSITE',
      },
    });
    ensureWorker();
    const job = await submit({
      source: { type: 's3', bucket: BUCKET, key: 'multi.bin' },
      algorithms: ['sha256', 'sha1', 'md5', 'crc32', 'crc32c', 'crc64nvme'],
      s3Checksum: true,
    });
    const done = await finished(job.id);
    expect(done.status).toBe('succeeded');
    expect(done.digests?.sha256.hex).toBe(digest('sha256', data).toString('hex'));
    expect(done.digests?.md5.hex).toBe(digest('md5', data).toString('hex'));
    const s3 = done.s3Checksum!;
    expect(s3.sha256).toEqual({
      value: composite('sha256', data, sizes),
      type: 'COMPOSITE',
      parts: 3,
      verified: true,
      stored: composite('sha256', data, sizes),
    });
    expect(s3.sha1).toEqual({
      value: composite('sha1', data, sizes),
      type: 'COMPOSITE',
      parts: 3,
      verified: null,
    });
    expect(s3.crc32).toEqual({
      value: composite('crc32', data, sizes),
      type: 'COMPOSITE',
      parts: 3,
      verified: null,
    });
    // s3rver's ETag of a completed upload is the MD5 of the whole: not the multipart form, so not comparable.
    expect(s3.md5).toEqual({
      value: multipartEtag(data, sizes),
      type: 'COMPOSITE',
      parts: 3,
      verified: null,
      stored: etag.replace(/"/g, ''),
    });
    expect(s3.crc32c).toMatchObject({ type: 'COMPOSITE', parts: 3, verified: null });
    expect(s3.crc32c.value).toMatch(/^[A-Za-z0-9+/]{6}==-3$/);
    expect(s3.crc64nvme).toEqual({
      value: done.digests?.crc64nvme.base64,
      type: 'FULL_OBJECT',
      parts: 3,
      verified: null,
    });
    expect(proxy.partHeads.get(`/${BUCKET}/multi.bin`)).toBe(3);
  });

  it('multipart object with a FULL_OBJECT crc32 stored: full-object form, verified', async () => {
    const sizes = [4 * MiB, 4 * MiB, 1 * MiB + 1];
    const data = randomBytes(sizes.reduce((a, b) => a + b, 0));
    const etag = await put('full-crc.bin', data);
    proxy.objects.set(`/${BUCKET}/full-crc.bin`, {
      etag,
      size: data.length,
      partSizes: sizes,
      checksumHeaders: {
        'x-amz-checksum-crc32': crc32(data).toString('base64'),
        'x-amz-checksum-type': 'FULL_OBJECT',
      },
    });
    ensureWorker();
    const job = await submit({
      source: `s3://${BUCKET}/full-crc.bin`,
      algorithms: ['crc32', 'sha256'],
      s3Checksum: true,
    });
    const done = await finished(job.id);
    expect(done.status).toBe('succeeded');
    expect(done.s3Checksum).toEqual({
      crc32: {
        value: crc32(data).toString('base64'),
        type: 'FULL_OBJECT',
        parts: 3,
        verified: true,
        stored: crc32(data).toString('base64'),
      },
      sha256: {
        value: composite('sha256', data, sizes),
        type: 'COMPOSITE',
        parts: 3,
        verified: null,
      },
    });
  });

  it('stored checksum differs from the bytes → failed with S3_CHECKSUM_MISMATCH, digests kept', async () => {
    const sizes = [5 * MiB, 3 * MiB];
    const data = randomBytes(8 * MiB);
    const etag = await put('corrupt.bin', data);
    const other = Buffer.from(data);
    other[6 * MiB] ^= 1; // the checksum S3 stores was computed over different bytes
    const stored = composite('sha256', other, sizes);
    proxy.objects.set(`/${BUCKET}/corrupt.bin`, {
      etag,
      size: data.length,
      partSizes: sizes,
      checksumHeaders: { 'x-amz-checksum-sha256': stored, 'x-amz-checksum-type': 'COMPOSITE' },
    });
    ensureWorker();
    const job = await submit({
      source: `s3://${BUCKET}/corrupt.bin`,
      algorithms: ['sha256'],
      s3Checksum: true,
    });
    const done = await finished(job.id);
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('S3_CHECKSUM_MISMATCH');
    expect(done.error?.details).toEqual({
      sha256: { stored, computed: composite('sha256', data, sizes), type: 'COMPOSITE' },
    });
    expect(done.digests?.sha256.hex).toBe(digest('sha256', data).toString('hex'));
    expect(done.s3Checksum?.sha256).toMatchObject({
      verified: false,
      stored,
      value: composite('sha256', data, sizes),
    });
  });

  it('part sizes that do not add up to the object → SOURCE_UNSUPPORTED at once, no digest', async () => {
    const data = randomBytes(2 * MiB);
    const etag = await put('bad-layout.bin', data);
    proxy.objects.set(`/${BUCKET}/bad-layout.bin`, {
      etag,
      size: data.length,
      partSizes: [MiB, MiB - 1],
    });
    ensureWorker();
    const job = await submit({
      source: `s3://${BUCKET}/bad-layout.bin`,
      algorithms: ['sha256'],
      s3Checksum: true,
    });
    const done = await finished(job.id);
    expect([done.status, done.error?.code, done.digests]).toEqual([
      'failed',
      'SOURCE_UNSUPPORTED',
      null,
    ]);
    expect(done.error?.details).toMatchObject({ size: data.length, sum: 2 * MiB - 1 });
    expect(done.attempts).toBe(1); // permanent: no retry
  });

  it('worker killed mid-object: the resumed job keeps the pinned parts and part states; values stay right', async () => {
    await worker?.stop();
    const sizes = [7 * MiB, 7 * MiB, 7 * MiB, 3 * MiB + 11];
    const data = randomBytes(sizes.reduce((a, b) => a + b, 0));
    const etag = await put('resume.bin', data);
    proxy.objects.set(`/${BUCKET}/resume.bin`, {
      etag,
      size: data.length,
      partSizes: sizes,
      checksumHeaders: {
        'x-amz-checksum-sha1': composite('sha1', data, sizes),
        'x-amz-checksum-type': 'COMPOSITE',
      },
    });
    const job = await submit({
      source: `s3://${BUCKET}/resume.bin`,
      algorithms: ['sha1', 'md5', 'crc32'],
      s3Checksum: true,
    });

    s3.bytesPerSecond = 12 * MiB; // slow enough to die in the middle
    const first = env.startWorker(remoteEnv);
    await first.waitForLog((line) => line.jobId === job.id && isCheckpoint(9 * MiB)(line), 60_000);
    first.kill('SIGKILL');
    await first.exited;
    await env.waitForWorkerSessionsGone();
    const crashed = await env.job(job.id);
    expect(crashed.checkpoint_offset).toBeGreaterThanOrEqual(9 * MiB); // inside part 2: part 1 is done, part 2 half
    expect(crashed.checkpoint_offset).toBeLessThan(data.length);
    expect((await env.states(job.id)).has('s3checksum')).toBe(true);

    proxy.partHeads.clear();
    s3.bytesPerSecond = 0;
    worker = env.startWorker(remoteEnv);
    const done = await finished(job.id);
    expect(done.status).toBe('succeeded');
    expect(done.resumes).toBeGreaterThanOrEqual(1);
    expect(done.s3Checksum).toEqual({
      sha1: {
        value: composite('sha1', data, sizes),
        type: 'COMPOSITE',
        parts: 4,
        verified: true,
        stored: composite('sha1', data, sizes),
      },
      md5: {
        value: multipartEtag(data, sizes),
        type: 'COMPOSITE',
        parts: 4,
        verified: null,
        stored: etag.replace(/"/g, ''),
      },
      crc32: {
        value: composite('crc32', data, sizes),
        type: 'COMPOSITE',
        parts: 4,
        verified: null,
      },
    });
    expect(proxy.partHeads.get(`/${BUCKET}/resume.bin`) ?? 0).toBe(0); // the layout came from the checkpoint
    expect((await env.states(job.id)).size).toBe(0);
  });

  it('400 S3_CHECKSUM_NOT_SUPPORTED: not an s3 source, or no algorithm S3 has a form for; 400 on a non-boolean', async () => {
    const path = join(env.dataDir, 'local.bin');
    await writeFile(path, 'x');
    const before = (await env.db.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs'))
      .rows[0].n;
    const file = await http()
      .post('/v1/jobs')
      .send({ source: `file://${path}`, algorithms: ['sha256'], s3Checksum: true })
      .expect(400);
    expect(file.body.error).toMatchObject({
      code: 'S3_CHECKSUM_NOT_SUPPORTED',
      details: { reason: 'source' },
    });
    const httpSource = await http()
      .post('/v1/jobs')
      .send({
        source: { type: 'http', url: 'https://example.com/x' },
        algorithms: ['sha256'],
        s3Checksum: true,
      })
      .expect(400);
    expect(httpSource.body.error.code).toBe('S3_CHECKSUM_NOT_SUPPORTED');
    const noAlgorithm = await http()
      .post('/v1/jobs')
      .send({
        source: `s3://${BUCKET}/single.bin`,
        algorithms: ['sha512', 'sha3-256'],
        s3Checksum: true,
      })
      .expect(400);
    expect(noAlgorithm.body.error).toMatchObject({
      code: 'S3_CHECKSUM_NOT_SUPPORTED',
      details: { reason: 'algorithms' },
    });
    const notBoolean = await http()
      .post('/v1/jobs')
      .send({ source: `s3://${BUCKET}/single.bin`, algorithms: ['sha256'], s3Checksum: 'yes' })
      .expect(400);
    expect(notBoolean.body.error.code).not.toBe('S3_CHECKSUM_NOT_SUPPORTED');
    // false is the default: accepted, and the job shows no s3Checksum.
    const off = await http()
      .post('/v1/jobs')
      .send({ source: `file://${path}`, algorithms: ['sha256'], s3Checksum: false })
      .expect(202);
    expect(off.body).not.toHaveProperty('s3Checksum');
    expect(off.body.options).toEqual({});
    const after = (await env.db.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs')).rows[0]
      .n;
    expect(after).toBe(before + 1);
  });
});
