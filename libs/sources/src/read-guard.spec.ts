import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';

import { s3ClientConfig, startS3Server, type TestS3Server } from '../../../test/helpers/s3-server';
import { FileRoots } from './file-roots';
import { FileSource } from './file-source';
import { NetGuard } from './net-guard';
import { ReadGuard, type ReadLimits } from './read-guard';
import { createS3Client, S3Source } from './s3-source';
import type { Source } from './source';
import { SourceError } from './source-error';

/**
 * The ReadGuard on the S3 and file sources (the HTTP source: test/sources-limits.e2e-spec.ts):
 * a real S3-compatible server (s3rver behind its throttling proxy) and real files. Oracles: the
 * bytes written (Node's crypto) and the error each limit must end the read with.
 */
const KiB = 1024;
const NO_LIMITS: ReadLimits = {
  maxBytes: Number.MAX_SAFE_INTEGER,
  minBytesPerInterval: 0,
  progressIntervalMs: 1000,
};
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** Reads through a guard; resolves with the bytes or the error the read ended with. */
async function guardedRead(source: Source, guard: ReadGuard, offset = 0, chunkBytes = 256 * KiB) {
  const opened = await guard.watch(
    await source.open(offset, null, { chunkBytes, onBytes: guard.onBytes }),
    offset,
  );
  const parts: Buffer[] = [];
  try {
    for await (const chunk of opened.stream) parts.push(Buffer.from(chunk));
    return { bytes: Buffer.concat(parts) };
  } catch (error) {
    return { error, bytes: Buffer.concat(parts) };
  } finally {
    await opened.close();
  }
}

describe('ReadGuard', () => {
  let dir: string;
  let s3: TestS3Server;
  let client: S3Client;
  let roots: FileRoots;
  const data = randomBytes(1024 * KiB + 7);
  const bucket = 'hashq-guard';
  const s3Source = () =>
    new S3Source(
      { type: 's3', bucket, key: 'object' },
      client,
      new NetGuard(['127.0.0.1']),
      s3.endpoint,
    );
  const fileSource = () => new FileSource(join(dir, 'file.bin'), roots);

  beforeAll(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), 'hashq-guard-')));
    await writeFile(join(dir, 'file.bin'), data);
    roots = new FileRoots([dir]);
    s3 = await startS3Server(join(dir, 's3'), [bucket]);
    client = createS3Client(s3ClientConfig(s3, { S3_MAX_ATTEMPTS: '1' }));
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'object', Body: data }));
  });

  afterEach(() => {
    s3.bytesPerSecond = 0;
  });

  afterAll(async () => {
    client?.destroy();
    await s3?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('passes every byte through when the limits hold (S3 and file, from an offset too)', async () => {
    for (const source of [s3Source(), fileSource()]) {
      const whole = await guardedRead(
        source,
        new ReadGuard({ ...NO_LIMITS, maxBytes: data.length }),
      );
      expect(whole.error).toBeUndefined();
      expect(sha256(whole.bytes)).toBe(sha256(data));
    }
    const rest = await guardedRead(
      fileSource(),
      new ReadGuard({ ...NO_LIMITS, maxBytes: data.length }),
      1000,
    );
    expect(sha256(rest.bytes)).toBe(sha256(data.subarray(1000)));
  });

  it('refuses a declared size over the maximum before reading: SOURCE_TOO_LARGE (S3 and file)', async () => {
    for (const source of [s3Source(), fileSource()]) {
      const guard = new ReadGuard({ ...NO_LIMITS, maxBytes: data.length - 1 });
      let received = 0;
      const opened = await source.open(0, null, { onBytes: (n) => (received += n) });
      const error = await guard.watch(opened, 0).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(SourceError);
      const details = { size: data.length, maxBytes: data.length - 1 };
      expect(error).toMatchObject({ code: 'SOURCE_TOO_LARGE', details });
      expect(received).toBe(0);
    }
  });

  it('fails an S3 read slower than the minimum progress with SOURCE_TOO_SLOW', async () => {
    s3.bytesPerSecond = 16 * KiB; // the proxy pauses seconds after every piece
    const limits = {
      maxBytes: data.length,
      minBytesPerInterval: 64 * KiB,
      progressIntervalMs: 200,
    };
    const { error, bytes } = await guardedRead(s3Source(), new ReadGuard(limits));
    expect(error).toMatchObject({
      code: 'SOURCE_TOO_SLOW',
      details: { minBytesPerInterval: 64 * KiB },
    });
    expect(bytes.length).toBeLessThan(data.length);
  });

  it('an abort ends a blocked S3 read with the abort reason', async () => {
    s3.bytesPerSecond = 8 * KiB;
    const controller = new AbortController();
    const guard = new ReadGuard(NO_LIMITS, controller.signal);
    let received = 0;
    const opened = await guard.watch(
      await s3Source().open(0, null, { chunkBytes: 512 * KiB, onBytes: (n) => (received += n) }),
      0,
    );
    const reading = opened.stream[Symbol.asyncIterator]().next();
    while (received === 0) await new Promise((r) => setTimeout(r, 10)); // bytes are flowing, the chunk is not full
    const reason = new Error('canceled');
    controller.abort(reason);
    await expect(reading).rejects.toBe(reason);
    await opened.close();
  });

  it('an abort ends a file read at the next chunk with the abort reason', async () => {
    const controller = new AbortController();
    const guard = new ReadGuard(NO_LIMITS, controller.signal);
    const opened = await guard.watch(await fileSource().open(0, null, { chunkBytes: 64 * KiB }), 0);
    const chunks = opened.stream[Symbol.asyncIterator]();
    expect((await chunks.next()).value).toHaveLength(64 * KiB);
    controller.abort();
    await expect(chunks.next()).rejects.toMatchObject({ name: 'AbortError' });
    await opened.close();
  });
});
