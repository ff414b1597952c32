import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';

import { s3ClientConfig, startS3Server, type TestS3Server } from '../../../test/helpers/s3-server';
import { NetGuard } from './net-guard';
import { createS3Client, S3Source } from './s3-source';
import { SourceError } from './source-error';

/**
 * S3Source against a real S3-compatible server (s3rver, filesystem-backed in a
 * temp dir, on 127.0.0.1) behind a counting proxy: the oracle is Node's crypto
 * over the uploaded bytes, and the proxy tells which ranges were asked and how
 * many body bytes went out.
 */
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

async function readAll(stream: AsyncIterable<Buffer>, limit = Infinity): Promise<Buffer> {
  const parts: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    parts.push(Buffer.from(chunk));
    total += chunk.length;
    if (total >= limit) break;
  }
  return Buffer.concat(parts);
}

describe('S3Source (s3rver on 127.0.0.1)', () => {
  let dir: string;
  let s3: TestS3Server;
  let client: S3Client;
  let admin: S3Client;
  const guard = new NetGuard(['127.0.0.1']);
  const objects = new Map<string, Buffer>();
  const bucket = 'hashq-test';

  const config = (env: Record<string, string> = {}) =>
    s3ClientConfig(s3, { S3_MAX_ATTEMPTS: '2', ...env });
  const source = (key: string, c: S3Client = client, parallelGets?: number) =>
    new S3Source({ type: 's3', bucket, key }, c, guard, s3.endpoint, parallelGets);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hashq-s3-'));
    s3 = await startS3Server(dir, [bucket]);
    client = createS3Client(config());
    admin = createS3Client(config());
    for (const [key, size] of [
      ['empty', 0],
      ['one', 1],
      ['small', 100_000],
      ['medium', 3 * 1024 * 1024 + 17],
    ] as const) {
      const data = randomBytes(size);
      objects.set(key, data);
      await admin.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: data }));
    }
    // Multipart: two 5 MiB parts and a short last one (ETag "<md5 of md5s>-3").
    const data = randomBytes(10 * 1024 * 1024 + 4321);
    objects.set('multi', data);
    const { UploadId } = await admin.send(
      new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'multi' }),
    );
    const parts = [];
    for (let n = 1, at = 0; at < data.length; n++, at += 5 * 1024 * 1024) {
      const body = data.subarray(at, Math.min(data.length, at + 5 * 1024 * 1024));
      const { ETag } = await admin.send(
        new UploadPartCommand({
          Bucket: bucket,
          Key: 'multi',
          UploadId,
          PartNumber: n,
          Body: body,
        }),
      );
      parts.push({ ETag, PartNumber: n });
    }
    await admin.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: 'multi',
        UploadId,
        MultipartUpload: { Parts: parts },
      }),
    );
  });

  afterAll(async () => {
    client?.destroy();
    admin?.destroy();
    await s3?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it.each([1, 4])(
    'reads objects of several sizes (incl. multipart), %i GET(s) at a time; digests equal Node crypto',
    async (parallelGets) => {
      for (const [key, data] of objects) {
        const opened = await source(key, client, parallelGets).open(0, null, {
          chunkBytes: 1 << 20,
        });
        const bytes = await readAll(opened.stream);
        await opened.close();
        expect([key, bytes.length, sha256(bytes)]).toEqual([key, data.length, sha256(data)]);
        expect(opened.size).toBe(data.length);
        expect(opened.version.etag).toMatch(/^"[0-9a-f]{32}(-3)?"$/);
        expect(await source(key).currentVersion()).toEqual(opened.version);
      }
    },
  );

  it('a resumed read asks only the rest, in chunk-sized ranged GETs all pinned by If-Match', async () => {
    const data = objects.get('multi')!;
    const cut = 6 * 1024 * 1024 + 3;
    // One stream before the crash: no GET of it can reach the server after the reset below.
    const first = await source('multi').open(0, null, { chunkBytes: 1 << 20 });
    const head = (await readAll(first.stream, cut)).subarray(0, cut);
    await first.close();
    s3.reset();
    const second = await source('multi', client, 4).open(cut, first.version, {
      chunkBytes: 1 << 20,
    });
    const tail = await readAll(second.stream);
    expect(sha256(Buffer.concat([head, tail]))).toBe(sha256(data));
    const gets = s3.requests.filter((r) => r.method === 'GET');
    // After the crash: ranges tiling [cut, size) exactly once, each pinned, each carrying its bytes.
    const expected = [];
    for (let at = cut; at < data.length; at += 1 << 20) {
      const end = Math.min(data.length, at + (1 << 20)) - 1;
      expected.push({
        method: 'GET',
        path: `/${bucket}/multi`,
        range: `bytes=${at}-${end}`,
        ifMatch: first.version.etag,
        bytes: end - at + 1,
      });
    }
    expect([...gets].sort((a, b) => rangeStart(a.range) - rangeStart(b.range))).toEqual(expected);
  });

  it('one GET at a time (S3_PARALLEL_GETS=1, the default): a resumed read is one GET of the rest', async () => {
    const data = objects.get('multi')!;
    const cut = 6 * 1024 * 1024 + 3;
    const first = await source('multi').open(0, null, { chunkBytes: 1 << 20 });
    const head = (await readAll(first.stream, cut)).subarray(0, cut);
    await first.close();
    s3.reset();
    const second = await source('multi').open(cut, first.version, { chunkBytes: 1 << 20 });
    const tail = await readAll(second.stream);
    expect(sha256(Buffer.concat([head, tail]))).toBe(sha256(data));
    expect(s3.requests.filter((r) => r.method === 'GET')).toEqual([
      {
        method: 'GET',
        path: `/${bucket}/multi`,
        range: `bytes=${cut}-`,
        ifMatch: first.version.etag,
        bytes: data.length - cut,
      },
    ]);
  });

  it('an object replaced during a ranged read fails SOURCE_CHANGED, never a digest', async () => {
    const data = randomBytes(12 * 1024 * 1024);
    await admin.send(new PutObjectCommand({ Bucket: bucket, Key: 'swapped', Body: data }));
    s3.reset();
    const opened = await source('swapped', client, 4).open(0, null, { chunkBytes: 1 << 20 });
    const chunks = opened.stream[Symbol.asyncIterator]();
    expect((await chunks.next()).value).toEqual(data.subarray(0, 1 << 20));
    // s3rver rewrites an object's file in place: a range still being served would end short. The
    // ranges asked so far (the first chunk taken: ranges 1 to 4, the fourth asked after a signing
    // step, so it may reach the server later) are let finish; the ones asked after the
    // replacement must fail.
    const ranges = () => s3.requests.filter((r) => /^bytes=\d+-\d+$/.test(r.range ?? ''));
    const served = () =>
      ranges().length >= 4 && ranges().every((r) => r.bytes === rangeLength(r.range));
    for (let i = 0; i < 1000 && !served(); i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    await admin.send(
      new PutObjectCommand({ Bucket: bucket, Key: 'swapped', Body: randomBytes(data.length) }),
    );
    const err = await (async () => {
      for (;;) if ((await chunks.next()).done) return null;
    })().catch((e: SourceError) => e);
    await opened.close();
    expect(err).toBeInstanceOf(SourceError);
    expect([err!.code, err!.permanent]).toEqual(['SOURCE_CHANGED', true]);
  });

  it('object replaced between crash and resume → SOURCE_CHANGED', async () => {
    const data = randomBytes(2 * 1024 * 1024);
    await admin.send(new PutObjectCommand({ Bucket: bucket, Key: 'replaced', Body: data }));
    const first = await source('replaced').open(0, null, { chunkBytes: 1 << 20 });
    await readAll(first.stream, 1 << 20);
    await first.close();
    const other = Buffer.from(data);
    other[other.length - 1] ^= 0xff;
    await admin.send(new PutObjectCommand({ Bucket: bucket, Key: 'replaced', Body: other }));
    const err = await source('replaced')
      .open(1 << 20, first.version)
      .then(expectedFailure, (e: SourceError) => e);
    expect(err).toBeInstanceOf(SourceError);
    expect([err.code, err.permanent]).toEqual(['SOURCE_CHANGED', true]);
  });

  it('404 → SOURCE_NOT_FOUND, wrong credentials (403) → SOURCE_FORBIDDEN, both permanent', async () => {
    const missing = await source('no-such-key')
      .open(0, null)
      .then(expectedFailure, (e: SourceError) => e);
    expect([missing.code, missing.permanent]).toEqual(['SOURCE_NOT_FOUND', true]);
    const noBucket = await new S3Source(
      { type: 's3', bucket: 'no-such-bucket', key: 'k' },
      client,
      guard,
      s3.endpoint,
    )
      .open(0, null)
      .then(expectedFailure, (e: SourceError) => e);
    expect(noBucket.code).toBe('SOURCE_NOT_FOUND');
    const stranger = createS3Client(
      config({ S3_ACCESS_KEY_ID: 'NOBODY', S3_SECRET_ACCESS_KEY: 'wrong' }),
    );
    try {
      const denied = await source('small', stranger)
        .open(0, null)
        .then(expectedFailure, (e: SourceError) => e);
      expect([denied.code, denied.permanent]).toEqual(['SOURCE_FORBIDDEN', true]);
    } finally {
      stranger.destroy();
    }
  });

  it('SSRF: an endpoint on loopback is refused unless HASHQ_ALLOW_HOSTS allows it', async () => {
    const blocked = createS3Client(config({ HASHQ_ALLOW_HOSTS: '' }));
    try {
      const err = await new S3Source(
        { type: 's3', bucket, key: 'small' },
        blocked,
        new NetGuard([]),
        s3.endpoint,
      )
        .open(0, null)
        .then(expectedFailure, (e: SourceError) => e);
      expect(err.code).toBe('SOURCE_ADDRESS_FORBIDDEN');
      // A host NAME resolving to loopback is refused at connect time by the guarded lookup.
      const byName = createS3Client(
        config({
          HASHQ_ALLOW_HOSTS: '',
          S3_ENDPOINT: s3.endpoint.replace('127.0.0.1', 'localhost'),
        }),
      );
      const viaName = await new S3Source(
        { type: 's3', bucket, key: 'small' },
        byName,
        new NetGuard([]),
        undefined,
      )
        .open(0, null)
        .then(expectedFailure, (e: SourceError) => e);
      byName.destroy();
      expect(viaName.code).toBe('SOURCE_ADDRESS_FORBIDDEN');
    } finally {
      blocked.destroy();
    }
  });
});

const rangeStart = (range: string | undefined) => Number(/^bytes=(\d+)-/.exec(range ?? '')?.[1]);
const rangeLength = (range: string | undefined) => {
  const [, start, end] = /^bytes=(\d+)-(\d+)$/.exec(range ?? '') ?? [];
  return Number(end) - Number(start) + 1;
};

function expectedFailure(): never {
  throw new Error('expected the source to fail');
}
