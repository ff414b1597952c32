import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';

import { s3ClientConfig, startS3Server, type TestS3Server } from '../../../test/helpers/s3-server';
import { NetGuard } from './net-guard';
import { createS3Client, S3Source } from './s3-source';
import type { SourceError } from './source-error';

/**
 * The lean GetObject (s3-get.ts) and its reused-buffer body (raw-http-get.ts) against a real
 * s3rver, through S3Source: digests equal Node's crypto over the uploaded bytes, whatever the key's
 * characters, a slow reader (the socket pauses and resumes), chunks read in place (valid as the
 * Source contract says), an answer without Content-Length (read again through node:http),
 * throttling (retried) and a connection cut mid-body (a typed error).
 */
const sha256 = (data: Buffer | Uint8Array) => createHash('sha256').update(data).digest('hex');

interface Mangling {
  /** Answers of GETs with the body sent chunked (no Content-Length). */
  chunked: boolean;
  /** GETs still to answer 503 SlowDown. */
  slowDowns: number;
  /** Cut the connection of a GET after this many body bytes (0: never). */
  cutAfter: number;
  /** GETs still to hang up on before any answer. */
  hangUps: number;
}

/** An HTTP proxy in front of `target` that changes GET answers as `mangling` says. */
async function startMangler(target: string, mangling: Mangling): Promise<Server & { url: string }> {
  const backend = new URL(target);
  const server = createServer((req, res) => {
    if (req.method === 'GET' && mangling.hangUps > 0) {
      mangling.hangUps--;
      req.socket.destroy();
      return;
    }
    if (req.method === 'GET' && mangling.slowDowns > 0) {
      mangling.slowDowns--;
      res.writeHead(503, { 'content-type': 'application/xml' });
      res.end('<?xml version="1.0"?><Error><Code>SlowDown</Code><Message>slow</Message></Error>');
      return;
    }
    const upstream = request(
      {
        host: backend.hostname,
        port: backend.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        const headers = { ...answer.headers };
        if (req.method === 'GET' && mangling.chunked) delete headers['content-length'];
        res.writeHead(answer.statusCode ?? 502, headers);
        let sent = 0;
        answer.on('data', (piece: Buffer) => {
          sent += piece.length;
          if (req.method === 'GET' && mangling.cutAfter > 0 && sent > mangling.cutAfter) {
            res.socket?.destroy();
            answer.destroy();
            return;
          }
          res.write(piece);
        });
        answer.on('end', () => res.end());
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(server, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
  });
}

async function digestOf(stream: AsyncIterable<Buffer>, delayMs = 0): Promise<[string, number]> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of stream) {
    hash.update(chunk);
    bytes += chunk.length;
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
  return [hash.digest('hex'), bytes];
}

describe('lean S3 GET (s3rver on 127.0.0.1)', () => {
  let dir: string;
  let s3: TestS3Server;
  let admin: S3Client;
  const guard = new NetGuard(['127.0.0.1']);
  const bucket = 'hashq-get';
  const big = randomBytes(6 * 1024 * 1024 + 123);
  const mangling: Mangling = { chunked: false, slowDowns: 0, cutAfter: 0, hangUps: 0 };
  let mangler: Server & { url: string };

  const sourceAt = (endpoint: string, key: string, env: Record<string, string> = {}) => {
    const client = createS3Client(s3ClientConfig({ endpoint }, { S3_MAX_ATTEMPTS: '3', ...env }));
    return new S3Source({ type: 's3', bucket, key }, client, guard, endpoint);
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hashq-s3get-'));
    s3 = await startS3Server(dir, [bucket]);
    admin = createS3Client(s3ClientConfig(s3));
    await admin.send(new PutObjectCommand({ Bucket: bucket, Key: 'big', Body: big }));
    mangler = await startMangler(s3.endpoint, mangling);
  });

  afterEach(() =>
    Object.assign(mangling, { chunked: false, slowDowns: 0, cutAfter: 0, hangUps: 0 }),
  );

  afterAll(async () => {
    mangler.closeAllConnections();
    await new Promise((resolve) => mangler.close(resolve));
    admin.destroy();
    await s3.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('keys with characters S3 encodes are signed and read right (small and large bodies)', async () => {
    const keys = ['a b/c+d', 'ünï/cödé', "x!'()*~.txt", '%41/%2F', 'deep/ly/nest ed/k=v&w'];
    for (const [i, key] of keys.entries()) {
      const data = randomBytes(i % 2 === 0 ? 2 * 1024 * 1024 + i : 1000 + i);
      await admin.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: data }));
      const opened = await sourceAt(s3.endpoint, key).open(0, null, { chunkBytes: 1024 * 1024 });
      expect(await digestOf(opened.stream)).toEqual([sha256(data), data.length]);
      await opened.close();
      // the size known beforehand (a batch's listing): a small one goes through node:http
      const known = await sourceAt(s3.endpoint, key).open(0, opened.version);
      expect(await digestOf(known.stream)).toEqual([sha256(data), data.length]);
      await known.close();
    }
  });

  it('a slow reader pauses the socket and the bytes still arrive whole, in order', async () => {
    const opened = await sourceAt(s3.endpoint, 'big').open(0, null, { chunkBytes: 256 * 1024 });
    expect(await digestOf(opened.stream, 15)).toEqual([sha256(big), big.length]);
    await opened.close();
  });

  it('read in place: a chunk is still whole once the next is asked (a body past the 4 MiB mark)', async () => {
    const data = randomBytes(17 * 1024 * 1024 + 5);
    await admin.send(new PutObjectCommand({ Bucket: bucket, Key: 'marked', Body: data }));
    const chunkBytes = 1024 * 1024;
    const opened = await sourceAt(s3.endpoint, 'marked').open(0, null, { chunkBytes });
    let previous: Buffer | null = null;
    let at = 0;
    for await (const chunk of opened.stream) {
      await new Promise((resolve) => setTimeout(resolve, 5)); // the socket fills the ring, pauses
      // this chunk and the one before (asked for once more since) must not have moved meanwhile
      if (previous) expect(previous.equals(data.subarray(at - previous.length, at))).toBe(true);
      expect(chunk.equals(data.subarray(at, at + chunk.length))).toBe(true);
      at += chunk.length;
      previous = chunk;
    }
    expect(at).toBe(data.length);
    await opened.close();
  });

  it('a resumed read from an offset, pinned to the ETag, yields the rest only', async () => {
    const first = await sourceAt(s3.endpoint, 'big').open(0, null);
    await first.close();
    const offset = 3 * 1024 * 1024 + 7;
    const opened = await sourceAt(s3.endpoint, 'big').open(offset, first.version);
    expect(await digestOf(opened.stream)).toEqual([
      sha256(big.subarray(offset)),
      big.length - offset,
    ]);
    await opened.close();
  });

  it('an answer without Content-Length is read again through node:http', async () => {
    mangling.chunked = true;
    const opened = await sourceAt(mangler.url, 'big').open(0, null);
    expect(await digestOf(opened.stream)).toEqual([sha256(big), big.length]);
    await opened.close();
  });

  it('503 SlowDown is retried (S3_MAX_ATTEMPTS), then fails SOURCE_READ_FAILED', async () => {
    mangling.slowDowns = 2;
    const opened = await sourceAt(mangler.url, 'big').open(0, null);
    expect(await digestOf(opened.stream)).toEqual([sha256(big), big.length]);
    await opened.close();
    mangling.slowDowns = 5;
    const err = (await sourceAt(mangler.url, 'big')
      .open(0, null)
      .catch((e: unknown) => e)) as SourceError;
    expect(err.code).toBe('SOURCE_READ_FAILED');
    expect(err.details).toMatchObject({ status: 503, s3Code: 'SlowDown' });
  });

  it('a connection closed before the answer is retried, then fails SOURCE_READ_FAILED', async () => {
    mangling.hangUps = 1;
    const opened = await sourceAt(mangler.url, 'big').open(0, null);
    expect(await digestOf(opened.stream)).toEqual([sha256(big), big.length]);
    await opened.close();
    mangling.hangUps = 5;
    const err = (await sourceAt(mangler.url, 'big')
      .open(0, null)
      .catch((e: unknown) => e)) as SourceError;
    expect(err.code).toBe('SOURCE_READ_FAILED');
    expect(mangling.hangUps).toBe(2); // S3_MAX_ATTEMPTS=3 attempts, no more
  });

  it('a connection cut mid-body fails the read SOURCE_READ_FAILED, never a short digest', async () => {
    mangling.cutAfter = 2 * 1024 * 1024;
    const opened = await sourceAt(mangler.url, 'big').open(0, null, { chunkBytes: 1024 * 1024 });
    const err = (await digestOf(opened.stream).catch((e: unknown) => e)) as SourceError;
    expect(err.code).toBe('SOURCE_READ_FAILED');
    await opened.close();
  });

  it('a missing key → SOURCE_NOT_FOUND with S3 code from the error body', async () => {
    const err = (await sourceAt(s3.endpoint, 'nope')
      .open(0, null)
      .catch((e: unknown) => e)) as SourceError;
    expect(err.code).toBe('SOURCE_NOT_FOUND');
    expect(err.details).toMatchObject({ status: 404, s3Code: 'NoSuchKey' });
  });
});
