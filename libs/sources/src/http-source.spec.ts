import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { rangeBounds } from '../../../test/helpers/http-range';
import { type HttpSettings, HttpSource } from './http-source';
import { NetGuard } from './net-guard';
import { sameVersion, type SourceVersion } from './source';
import { SourceError } from './source-error';

/**
 * HttpSource against real node:http servers on 127.0.0.1 (allowed explicitly,
 * as HASHQ_ALLOW_HOSTS=127.0.0.1 would). The oracle is Node's crypto over the
 * bytes the server holds; a resume is "read the first part, close, open at the
 * offset with the recorded version, read the rest".
 */
const SIZE = 3 * 1024 * 1024 + 12345;
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

interface Served {
  requests: Array<{ method: string; path: string; range?: string; ifRange?: string }>;
  bodyBytes: number;
}

async function readAll(stream: AsyncIterable<Buffer>, limit = Infinity): Promise<Buffer> {
  const parts: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    parts.push(Buffer.from(chunk)); // copy: buffers are reused
    total += chunk.length;
    if (total >= limit) break;
  }
  return Buffer.concat(parts);
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof SourceError) return err.code;
    throw err;
  }
  return 'NO_ERROR';
}

describe('HttpSource', () => {
  let server: Server;
  let base: string;
  let content: Buffer;
  let changed: Buffer;
  let changingVersion = 0;
  let presignedReplaced = false;
  const served: Served = { requests: [], bodyBytes: 0 };
  const etag = () => `"${sha256(content).slice(0, 16)}"`;
  const lastModified = new Date(Date.UTC(2026, 0, 2, 3, 4, 5)).toUTCString();

  function send(
    res: ServerResponse,
    status: number,
    headers: Record<string, string | number>,
    body: Buffer,
  ): void {
    res.writeHead(status, { 'content-length': body.length, ...headers });
    served.bodyBytes += body.length;
    res.end(body);
  }

  /**
   * Range support as RFC 9110 says: bytes=N- and bytes=N-M, If-Range (ETag or date), If-Match.
   * A null tag: a resource with Last-Modified only.
   */
  function ranged(
    req: IncomingMessage,
    res: ServerResponse,
    data: Buffer,
    tag: string | null,
  ): void {
    const headers = {
      ...(tag ? { etag: tag } : {}),
      'last-modified': lastModified,
      'accept-ranges': 'bytes',
    };
    const ifMatch = req.headers['if-match'];
    if (ifMatch && ifMatch !== '*' && ifMatch !== tag) {
      res.writeHead(412);
      return void res.end();
    }
    const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    const ifRange = req.headers['if-range'];
    const rangeApplies = range && (!ifRange || ifRange === tag || ifRange === lastModified);
    if (req.method === 'HEAD') {
      res.writeHead(200, { ...headers, 'content-length': data.length });
      return void res.end();
    }
    if (!rangeApplies) return send(res, 200, headers, data);
    const bounds = rangeBounds(range, data.length, res);
    if (!bounds) return;
    const { start, end, contentRange } = bounds;
    send(res, 206, { ...headers, 'content-range': contentRange }, data.subarray(start, end + 1));
  }

  /** A URL signed for GET only (S3/GCS presigned, Azure SAS): HEAD is refused with 403. */
  function getOnly(
    req: IncomingMessage,
    res: ServerResponse,
    data: Buffer,
    tag: string | null,
  ): void {
    if (req.method !== 'HEAD') return ranged(req, res, data, tag);
    res.writeHead(403);
    res.end();
  }

  beforeAll(async () => {
    content = randomBytes(SIZE);
    changed = Buffer.from(content);
    changed[SIZE - 1] ^= 1;
    server = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      served.requests.push({
        method: req.method ?? '',
        path,
        range: req.headers.range,
        ifRange: req.headers['if-range'] as string | undefined,
      });
      switch (path) {
        case '/range':
          return ranged(req, res, content, etag());
        case '/presigned':
          return getOnly(req, res, content, etag());
        case '/presigned-replaced': // replaced by `changed` once presignedReplaced is set
          return presignedReplaced
            ? getOnly(req, res, changed, '"v2"')
            : getOnly(req, res, content, '"v1"');
        case '/presigned-empty':
          return getOnly(req, res, Buffer.alloc(0), '"empty"');
        case '/presigned-last-modified': // no ETag: Last-Modified and the size pin it
          return getOnly(req, res, content, null);
        case '/redirect-presigned':
          res.writeHead(302, { location: '/presigned' });
          return void res.end();
        case '/norange': // ignores Range: always the whole body with 200
          return send(
            res,
            200,
            { etag: etag() },
            req.method === 'HEAD' ? Buffer.alloc(0) : content,
          );
        case '/changing': // a new version after the first GET
          if (req.method === 'GET') changingVersion++;
          return changingVersion <= 1
            ? ranged(req, res, content, '"v1"')
            : ranged(req, res, changed, '"v2"');
        case '/slow': // headers, a little body, then silence
          res.writeHead(200, { 'content-length': SIZE });
          res.write(content.subarray(0, 1000));
          return;
        case '/drop': // half the body, then the connection is cut
          res.writeHead(200, { 'content-length': SIZE, etag: etag() });
          res.write(content.subarray(0, SIZE >> 1), () => res.socket?.destroy());
          return;
        case '/redirect':
          res.writeHead(302, { location: '/range' });
          return void res.end();
        case '/redirect-metadata':
          res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
          return void res.end();
        case '/redirect-loopback2':
          res.writeHead(307, {
            location: `http://127.0.0.2:${(server.address() as AddressInfo).port}/range`,
          });
          return void res.end();
        case '/redirect-to': // to ?location=
          res.writeHead(302, {
            location: new URL(req.url ?? '/', base).searchParams.get('location') ?? '/',
          });
          return void res.end();
        case '/loop':
          res.writeHead(302, { location: '/loop' });
          return void res.end();
        case '/forbidden':
          res.writeHead(403);
          return void res.end();
        default:
          res.writeHead(404);
          return void res.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  beforeEach(() => {
    served.requests = [];
    served.bodyBytes = 0;
  });

  const settings = (over: Partial<HttpSettings> = {}): HttpSettings => ({
    guard: new NetGuard(['127.0.0.1']),
    connectTimeoutMs: 5000,
    idleTimeoutMs: 5000,
    maxRedirects: 3,
    ...over,
  });
  const source = (path: string, over?: Partial<HttpSettings>) =>
    new HttpSource({ type: 'http', url: base + path }, settings(over));

  /** Reads [0, cut) then resumes at `cut` with the recorded version, like a worker after a crash. */
  async function crashAndResume(path: string, cut: number) {
    const first = await source(path).open(0, null, { chunkBytes: 256 * 1024 });
    const head = (await readAll(first.stream, cut)).subarray(0, cut);
    await first.close();
    const version: SourceVersion = first.version;
    const second = await source(path).open(cut, version, { chunkBytes: 256 * 1024 });
    const tail = await readAll(second.stream);
    await second.close();
    return { whole: Buffer.concat([head, tail]), second, version };
  }

  it('reads a whole resource; digest equals Node crypto', async () => {
    const opened = await source('/range').open(0, null, { chunkBytes: 1 << 20 });
    const bytes = await readAll(opened.stream);
    expect(sha256(bytes)).toBe(sha256(content));
    expect(opened.size).toBe(SIZE);
    expect(opened.version).toEqual({ etag: etag(), lastModified, size: SIZE });
    expect(await source('/range').currentVersion()).toEqual(opened.version);
  });

  describe('the end-of-read version check without HEAD (URLs signed for GET only refuse it)', () => {
    it('a whole read, then the check: one ranged GET of one byte, same version as the read', async () => {
      const opened = await source('/presigned').open(0, null, { chunkBytes: 1 << 20 });
      expect(sha256(await readAll(opened.stream))).toBe(sha256(content));
      await opened.close();
      expect(await source('/presigned').currentVersion()).toEqual(opened.version);
      expect(opened.version).toEqual({ etag: etag(), lastModified, size: SIZE });
      const check = { method: 'GET', path: '/presigned', range: 'bytes=0-0', ifRange: undefined };
      expect(served.requests.at(-1)).toEqual(check);
      expect(served.bodyBytes).toBe(SIZE + 1);
    });

    it('an object replaced after the read: the check sees the new ETag, and a resume is refused', async () => {
      presignedReplaced = false;
      const opened = await source('/presigned-replaced').open(0, null, { chunkBytes: 1 << 20 });
      await readAll(opened.stream);
      await opened.close();
      presignedReplaced = true;
      try {
        const now = await source('/presigned-replaced').currentVersion();
        expect(now).toEqual({ etag: '"v2"', lastModified, size: SIZE });
        expect(sameVersion(now, opened.version)).toBe(false);
        expect(await codeOf(source('/presigned-replaced').open(1 << 20, opened.version))).toBe(
          'SOURCE_CHANGED',
        );
      } finally {
        presignedReplaced = false;
      }
    });

    it('an empty object (bytes=0-0 unsatisfiable, 416): asked again without Range, same version', async () => {
      const opened = await source('/presigned-empty').open(0, null);
      expect((await readAll(opened.stream)).length).toBe(0);
      expect(opened.version).toEqual({ etag: '"empty"', lastModified, size: 0 });
      expect(await source('/presigned-empty').currentVersion()).toEqual(opened.version);
    });

    it('Last-Modified only: the check compares the date and the size', async () => {
      const opened = await source('/presigned-last-modified').open(0, null, {
        chunkBytes: 1 << 20,
      });
      await readAll(opened.stream);
      const now = await source('/presigned-last-modified').currentVersion();
      expect(now).toEqual({ etag: null, lastModified, size: SIZE });
    });

    it('a server that ignores Range: the size comes from Content-Length of the 200, its body left unread', async () => {
      const opened = await source('/norange').open(0, null, { chunkBytes: 1 << 20 });
      await readAll(opened.stream);
      expect(await source('/norange').currentVersion()).toEqual(opened.version);
    });

    it('follows redirects, each target checked by the SSRF guard; statuses map as for a read', async () => {
      expect(await source('/redirect-presigned').currentVersion()).toEqual({
        etag: etag(),
        lastModified,
        size: SIZE,
      });
      expect(await codeOf(source('/redirect-metadata').currentVersion())).toBe(
        'SOURCE_ADDRESS_FORBIDDEN',
      );
      const spec = { type: 'http' as const, url: `${base}/presigned` };
      const unguarded = new HttpSource(spec, settings({ guard: new NetGuard([]) }));
      served.requests = [];
      expect(await codeOf(unguarded.currentVersion())).toBe('SOURCE_ADDRESS_FORBIDDEN');
      expect(served.requests).toEqual([]);
      expect(await codeOf(source('/missing').currentVersion())).toBe('SOURCE_NOT_FOUND');
      expect(await codeOf(source('/forbidden').currentVersion())).toBe('SOURCE_FORBIDDEN');
    });
  });

  it('resumes with Range + If-Range from the offset (server sends only the rest)', async () => {
    const cut = 1024 * 1024 + 7;
    const { whole, second } = await crashAndResume('/range', cut);
    expect(sha256(whole)).toBe(sha256(content));
    const resumed = served.requests.filter((r) => r.range);
    expect(resumed).toEqual([
      { method: 'GET', path: '/range', range: `bytes=${cut}-`, ifRange: etag() },
    ]);
    expect(second.discardedBytes).toBe(0);
  });

  it('a server that ignores Range: the first <offset> bytes are skipped and counted, digest still right', async () => {
    const cut = 2 * 1024 * 1024 + 1;
    const { whole, second } = await crashAndResume('/norange', cut);
    expect(sha256(whole)).toBe(sha256(content));
    expect(second.discardedBytes).toBe(cut);
  });

  it('content changed between crash and resume → SOURCE_CHANGED (If-Range answered with 200 + new ETag)', async () => {
    changingVersion = 0;
    const first = await source('/changing').open(0, null, { chunkBytes: 1 << 20 });
    await readAll(first.stream, 1 << 20);
    await first.close();
    expect(await codeOf(source('/changing').open(1 << 20, first.version))).toBe('SOURCE_CHANGED');
  });

  it('resume exactly at the end (416) yields nothing', async () => {
    const version = await source('/range').currentVersion();
    const opened = await source('/range').open(SIZE, version);
    expect((await readAll(opened.stream)).length).toBe(0);
  });

  it('a stalled server hits the idle timeout → transient SOURCE_READ_FAILED', async () => {
    const opened = await source('/slow', { idleTimeoutMs: 300 }).open(0, null, {
      chunkBytes: 1 << 20,
    });
    const err = await readAll(opened.stream).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SourceError);
    expect((err as SourceError).code).toBe('SOURCE_READ_FAILED');
    expect((err as SourceError).permanent).toBe(false);
  });

  it('a connection dropped mid-body → transient SOURCE_READ_FAILED, never a short digest', async () => {
    const opened = await source('/drop').open(0, null, { chunkBytes: 1 << 20 });
    const err = await readAll(opened.stream).catch((e: unknown) => e);
    expect((err as SourceError).code).toBe('SOURCE_READ_FAILED');
    expect((err as SourceError).permanent).toBe(false);
  });

  it('follows a same-host redirect; refuses redirect loops', async () => {
    const opened = await source('/redirect').open(0, null);
    expect(sha256(await readAll(opened.stream))).toBe(sha256(content));
    expect(await codeOf(source('/loop').open(0, null))).toBe('SOURCE_UNSUPPORTED');
    expect(served.requests.filter((r) => r.path === '/loop').length).toBe(4); // first + 3 redirects
  });

  it('redirects to forbidden addresses → SOURCE_ADDRESS_FORBIDDEN, nothing fetched there', async () => {
    expect(await codeOf(source('/redirect-metadata').open(0, null))).toBe(
      'SOURCE_ADDRESS_FORBIDDEN',
    );
    expect(await codeOf(source('/redirect-loopback2').open(0, null))).toBe(
      'SOURCE_ADDRESS_FORBIDDEN',
    );
    expect(served.requests.filter((r) => r.path === '/range')).toEqual([]);
  });

  it('redirects to multicast and broadcast literals in any form → SOURCE_ADDRESS_FORBIDDEN', async () => {
    // Forms the kernel would not open a TCP connection to either: no packet leaves even if the guard let them by.
    for (const target of [
      'http://224.1/',
      'http://4294967295/',
      'http://[ff02::1]/',
      'http://[::ffff:e000:1]:8080/',
    ]) {
      const path = `/redirect-to?location=${encodeURIComponent(target)}`;
      expect([target, await codeOf(source(path).open(0, null))]).toEqual([
        target,
        'SOURCE_ADDRESS_FORBIDDEN',
      ]);
    }
  });

  it('404 and 403 are permanent SOURCE_NOT_FOUND / SOURCE_FORBIDDEN', async () => {
    const missing = await source('/missing')
      .open(0, null)
      .then(expectedFailure, (e: SourceError) => e);
    expect([missing.code, missing.permanent]).toEqual(['SOURCE_NOT_FOUND', true]);
    const forbidden = await source('/forbidden')
      .open(0, null)
      .then(expectedFailure, (e: SourceError) => e);
    expect([forbidden.code, forbidden.permanent]).toEqual(['SOURCE_FORBIDDEN', true]);
  });

  it('SSRF: without HASHQ_ALLOW_HOSTS every internal address is refused before any request', async () => {
    const port = (server.address() as AddressInfo).port;
    const forbidden = [
      `http://127.0.0.1:${port}/range`,
      `http://localhost:${port}/range`, // a host NAME resolving to loopback
      `http://2130706433:${port}/range`, // 127.0.0.1 in decimal
      `http://[::ffff:127.0.0.1]:${port}/range`,
      `http://[::1]:${port}/range`,
      'http://0.0.0.0/',
      'http://10.1.2.3/',
      'http://172.16.0.1/',
      'http://192.168.1.1/',
      'http://169.254.169.254/latest/meta-data/',
      'http://100.64.0.1/',
      'http://[fd00:ec2::254]/',
      'http://[fe80::1]/',
    ];
    const none = { guard: new NetGuard([]) };
    for (const url of forbidden) {
      const src = new HttpSource({ type: 'http', url }, settings(none));
      expect([url, await codeOf(src.open(0, null))]).toEqual([url, 'SOURCE_ADDRESS_FORBIDDEN']);
    }
    expect(served.requests).toEqual([]);
  });

  it('SSRF: HASHQ_ALLOW_HOSTS entries (address, CIDR, host name) let a connection through', async () => {
    const port = (server.address() as AddressInfo).port;
    for (const allow of [['127.0.0.1'], ['127.0.0.0/8'], ['localhost', '::1/128']]) {
      const host = allow[0] === 'localhost' ? 'localhost' : '127.0.0.1';
      const src = new HttpSource(
        { type: 'http', url: `http://${host}:${port}/range` },
        settings({ guard: new NetGuard(allow) }),
      );
      const opened = await src.open(0, null);
      expect(sha256(await readAll(opened.stream))).toBe(sha256(content));
    }
  });
});

function expectedFailure(): never {
  throw new Error('expected the source to fail');
}
