/**
 * The HTTP surface under hostile or careless clients (README "Limits and hardening"): request ids
 * in headers, error bodies and every log line of a request; no stack, SQL or driver message in an
 * error body (a real PostgreSQL error is provoked); keys and Authorization never logged; helmet's
 * headers and the Content-Security-Policy of /docs; JSON body limits per route while tus PATCH
 * bodies stay streamed (digest against Node's crypto); slow clients cut off by the server's
 * timeouts (raw sockets that drip their request).
 */
import { createHash, randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { gzipSync } from 'node:zlib';

import { createLogger } from '@hashq/config';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';

import { createApiApp } from './helpers/api';
import { createTestEnv, type TestEnv } from './helpers/env';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const JSON_MAX = 64 * 1024;
const MANIFEST_MAX = 256 * 1024;

/** Keeps every log line the app writes. */
class LogSink extends Writable {
  readonly lines: Record<string, unknown>[] = [];
  text = '';

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    for (const line of chunk.toString().split('\n')) if (line) this.lines.push(JSON.parse(line));
    done();
  }

  of(requestId: string): Record<string, unknown>[] {
    return this.lines.filter((line) => line.requestId === requestId);
  }
}

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

function parseAnswer(text: string): RawAnswer {
  const [head, ...rest] = text.split('\r\n\r\n');
  const [statusLine, ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') };
}

/**
 * Opens a connection, writes `head`, then one `drip` every 100 ms for as long as the server keeps
 * the connection open; resolves with what the server answered once it closes it.
 */
function dripUntilClosed(port: number, head: string, drip: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setInterval(() => {
      if (socket.writable) socket.write(drip);
    }, 100);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => undefined); // a reset after the answer is a close too
    socket.on('close', () => {
      clearInterval(timer);
      resolve(parseAnswer(Buffer.concat(chunks).toString('latin1')));
    });
    socket.setTimeout(30_000, () => {
      clearInterval(timer);
      socket.destroy();
      reject(new Error('the server kept the dripping connection open for 30 s'));
    });
    socket.write(head);
  });
}

describe('HTTP hardening (e2e)', () => {
  let env: TestEnv;
  let app: INestApplication;
  let port: number;
  const logs = new LogSink();
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    env = await createTestEnv({
      API_HEADERS_TIMEOUT_MS: '500',
      API_REQUEST_TIMEOUT_MS: '1500',
      API_KEEP_ALIVE_TIMEOUT_MS: '500',
      BATCH_MANIFEST_MAX_BYTES: String(MANIFEST_MAX),
    });
    const logger = createLogger('api', 'info', { isTTY: false, destination: logs });
    app = await createApiApp(env, { logger });
    await app.listen(0, '127.0.0.1');
    port = (app.getHttpServer().address() as AddressInfo).port;
    await writeFile(join(env.fileRoot, 'a.bin'), 'abc');
  });

  afterAll(async () => {
    await app?.close();
    await env?.cleanup();
  });

  /** The lines of one request, once its request line is written (after the answer is sent). */
  async function linesOf(requestId: string): Promise<Record<string, unknown>[]> {
    for (let i = 0; i < 100 && !logs.of(requestId).some((l) => l.msg === 'request'); i++)
      await sleep(20);
    return logs.of(requestId);
  }

  describe('request ids', () => {
    it('makes a UUID when the client sends none, in the header and the error body', async () => {
      const res = await http().get('/v1/nothing').expect(404);
      expect(res.headers['x-request-id']).toMatch(UUID);
      expect(res.body.error).toMatchObject({
        code: 'NOT_FOUND',
        requestId: res.headers['x-request-id'],
      });
      const ok = await http().get('/v1/algorithms').expect(200);
      expect(ok.headers['x-request-id']).toMatch(UUID);
      expect(ok.headers['x-request-id']).not.toBe(res.headers['x-request-id']);
    });

    it('keeps a sane X-Request-Id of the client', async () => {
      const id = 'trace-42.a:b/c+d=';
      const res = await http().get('/v1/nothing').set('X-Request-Id', id).expect(404);
      expect([res.headers['x-request-id'], res.body.error.requestId]).toEqual([id, id]);
      expect((await linesOf(id)).map((line) => [line.msg, line.status])).toEqual([
        ['request', 404],
      ]);
    });

    it.each([
      ['spaces', 'two words'],
      ['quotes and braces', '{"level":60}'],
      ['129 characters', 'a'.repeat(129)],
    ])('replaces an X-Request-Id with %s by a UUID', async (_name, id) => {
      const res = await http().get('/v1/nothing').set('X-Request-Id', id).expect(404);
      expect(res.headers['x-request-id']).toMatch(UUID);
      expect(res.body.error.requestId).toBe(res.headers['x-request-id']);
    });

    it('gives one to requests the HTTP parser refuses, and logs it', async () => {
      const answer = await dripUntilClosed(
        port,
        'GET /v1/algorithms HTTP/1.1\r\nHost: x\r\nX-Bad: a\x01b\r\n\r\n',
        '',
      );
      const body = JSON.parse(answer.body);
      expect([answer.status, body.error.code]).toEqual([400, 'MALFORMED_REQUEST']);
      expect(body.error.requestId).toMatch(UUID);
      expect(answer.headers['x-request-id']).toBe(body.error.requestId);
      expect(logs.of(body.error.requestId).map((line) => line.msg)).toEqual([
        'request refused by the HTTP parser',
      ]);
    });
  });

  describe('a PostgreSQL error: logged with the request id, nothing of it in the answer', () => {
    beforeAll(() => moveJobsTable('jobs', 'jobs_moved'));
    afterAll(() => moveJobsTable('jobs_moved', 'jobs'));

    async function moveJobsTable(from: string, to: string): Promise<void> {
      const { Client } = await import('pg');
      const db = new Client({ connectionString: env.databaseUrl });
      await db.connect();
      try {
        await db.query(`ALTER TABLE ${from} RENAME TO ${to}`);
      } finally {
        await db.end();
      }
    }

    it.each([
      ['GET /v1/jobs', () => http().get('/v1/jobs')],
      [
        'POST /v1/jobs (its body read first)',
        () =>
          http()
            .post('/v1/jobs')
            .send({
              source: { type: 'file', path: join(env.fileRoot, 'a.bin') },
              algorithms: ['sha256'],
            }),
      ],
    ])('%s → 500 INTERNAL_ERROR and nothing else', async (name, send) => {
      const id = `db-error-${name.split(' ')[0]}`;
      const res = await send().set('X-Request-Id', id);
      expect(res.status).toBe(500);
      expect(res.body).toEqual({
        error: {
          code: 'INTERNAL_ERROR',
          message: 'internal server error',
          details: null,
          requestId: id,
        },
      });
      expect(res.text).not.toMatch(/jobs|relation|select|insert|at .*\.(js|ts)/i);
      const lines = await linesOf(id);
      const failure = lines.find((line) => line.msg === 'unhandled error');
      expect(failure?.err).toMatchObject({
        type: 'QueryFailedError',
        code: '42P01',
        parameters: '[redacted]', // a failed query's values are the request's data
      });
      expect(lines.map((line) => line.msg)).toEqual(['unhandled error', 'request']);
    });
  });

  it('never logs an Authorization header, a cookie or a key in the query string', async () => {
    const id = 'secrets-1';
    await http()
      .get(
        '/v1/jobs?limit=5&key=hq_abc123_secretinquery&access_token=tok-secret-2' +
          '&q=hq_zzz999_secretvalue3&next=%68q_enc001_secretvalue4',
      )
      .set('X-Request-Id', id)
      .set('Authorization', 'Bearer hq_abc123_secretinheader')
      .set('Cookie', 'session=cookie-secret-5');
    const [line] = (await linesOf(id)).filter((l) => l.msg === 'request');
    expect(line.url).toBe(
      '/v1/jobs?limit=5&key=[redacted]&access_token=[redacted]&q=[redacted]&next=[redacted]',
    );
    for (const secret of ['secretinquery', 'tok-secret-2', 'secretvalue', 'secretinheader'])
      expect(logs.text).not.toContain(secret);
    expect(logs.text).not.toContain('cookie-secret-5');
  });

  describe('security headers', () => {
    it('JSON answers: a CSP that allows nothing, no sniffing, no framing', async () => {
      for (const res of [
        await http().get('/v1/algorithms').expect(200),
        await http().get('/v1/nothing').expect(404),
      ]) {
        expect(res.headers).toMatchObject({
          'content-security-policy':
            "default-src 'none';base-uri 'none';form-action 'none';frame-ancestors 'none'",
          'x-content-type-options': 'nosniff',
          'x-frame-options': 'DENY',
          'referrer-policy': 'no-referrer',
        });
        expect(res.headers['x-powered-by']).toBeUndefined();
      }
    });

    it('/docs: Swagger UI loads its scripts from /docs only, none inline, and its document', async () => {
      const page = await http().get('/docs/').expect(200).expect('content-type', /html/);
      const csp = page.headers['content-security-policy'] as string;
      const directive = (name: string) =>
        csp
          .split(';')
          .find((d) => d.startsWith(`${name} `))
          ?.split(' ')
          .slice(1);
      expect(directive('script-src')).toEqual(["'self'"]);
      expect(directive('default-src')).toEqual(["'none'"]);
      expect(directive('connect-src')).toEqual(["'self'"]);
      const scripts = [...page.text.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
      expect(scripts.length).toBeGreaterThanOrEqual(3);
      for (const [, attributes, inline] of scripts) {
        expect(inline.trim()).toBe('');
        const src = /src=["']([^"']+)["']/.exec(attributes)?.[1];
        expect(src).toMatch(/^(\.\/|\/docs\/)?[\w.-]+\.js$/); // a file of /docs, same origin
        const file = src!.replace(/^(\.\/|\/docs\/)?/, '/docs/');
        await http()
          .get(file)
          .expect(200)
          .expect('content-type', /javascript/);
      }
      const document = await http().get('/docs/json').expect(200);
      expect(document.body.openapi).toMatch(/^3\./);
    });
  });

  describe('body size limits per route', () => {
    const job = (padding: number) =>
      JSON.stringify({ source: 'file:///x', algorithms: ['sha256'], p: 'x'.repeat(padding) });
    const overhead = job(0).length;

    it(`a JSON body of ${JSON_MAX} bytes is read; one byte more is 413 PAYLOAD_TOO_LARGE`, async () => {
      const fits = await http()
        .post('/v1/jobs')
        .set('Content-Type', 'application/json')
        .send(job(JSON_MAX - overhead));
      expect([fits.status, fits.body.error.code]).toEqual([400, 'VALIDATION_FAILED']); // parsed: `p` is unknown
      const over = await http()
        .post('/v1/jobs')
        .set('Content-Type', 'application/json')
        .send(job(JSON_MAX - overhead + 1));
      expect(over.status).toBe(413);
      expect(over.body.error).toMatchObject({
        code: 'PAYLOAD_TOO_LARGE',
        details: { limit: JSON_MAX },
        requestId: over.headers['x-request-id'],
      });
    });

    it('counts the body after decompression: a small gzip of a large body is 413', async () => {
      const zipped = gzipSync(job(JSON_MAX));
      expect(zipped.length).toBeLessThan(JSON_MAX / 16);
      // node:http: superagent would serialize a Buffer sent as application/json
      const { status, body } = await new Promise<{ status: number; body: string }>(
        (resolve, reject) => {
          const req = httpRequest(
            {
              port,
              host: '127.0.0.1',
              method: 'POST',
              path: '/v1/benchmarks',
              headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
            },
            (res) => {
              let text = '';
              res.on('data', (chunk: Buffer) => (text += chunk.toString()));
              res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
            },
          );
          req.on('error', reject);
          req.end(zipped);
        },
      );
      expect([status, JSON.parse(body).error.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    });

    it('batches take larger bodies (inline manifests), up to BATCH_MANIFEST_MAX_BYTES', async () => {
      // {"manifest":"mmm…"}: `bytes` long
      const manifest = (bytes: number) => JSON.stringify({ manifest: 'm'.repeat(bytes - 15) });
      const large = await http()
        .post('/v1/batches')
        .set('Content-Type', 'application/json')
        .send(manifest(JSON_MAX * 3));
      expect(large.status).not.toBe(413); // read, then answered by the route (or its absence)
      const over = await http()
        .post('/v1/batches')
        .set('Content-Type', 'application/json')
        .send(manifest(MANIFEST_MAX + 1));
      expect(over.status).toBe(413);
      expect(over.body.error).toMatchObject({
        code: 'PAYLOAD_TOO_LARGE',
        details: { limit: MANIFEST_MAX },
      });
    });

    it('a digest-session PATCH body is streamed, whatever its size: 1 MiB → the digest of Node', async () => {
      const data = randomBytes(1024 * 1024);
      const tus = { 'Tus-Resumable': '1.0.0' };
      const created = await http()
        .post('/v1/digest-sessions')
        .set(tus)
        .set('Upload-Length', String(data.length))
        .set('Upload-Metadata', `algorithms ${Buffer.from('sha256').toString('base64')}`)
        .expect(201);
      const done = await http()
        .patch(created.headers.location)
        .set(tus)
        .set({ 'Content-Type': 'application/offset+octet-stream', 'Upload-Offset': '0' })
        .send(data)
        .expect(204);
      expect(done.headers['hashq-digest']).toBe(
        `sha256="${createHash('sha256').update(data).digest('hex')}"`,
      );
    });
  });

  describe('slow clients are cut off', () => {
    it('headers dripped one line at a time: 408 REQUEST_TIMEOUT, connection closed', async () => {
      const answer = await dripUntilClosed(
        port,
        'GET /v1/algorithms HTTP/1.1\r\nHost: x\r\n',
        'X-Drip: a\r\n',
      );
      const body = JSON.parse(answer.body);
      expect([answer.status, body.error.code]).toEqual([408, 'REQUEST_TIMEOUT']);
      expect(body.error.requestId).toMatch(UUID);
    });

    it('a body dripped one byte at a time: 408 REQUEST_TIMEOUT with its request id, closed', async () => {
      const answer = await dripUntilClosed(
        port,
        'POST /v1/jobs HTTP/1.1\r\nHost: x\r\nX-Request-Id: drip-body\r\n' +
          'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{',
        ' ',
      );
      const body = JSON.parse(answer.body);
      expect([answer.status, body.error.code]).toEqual([408, 'REQUEST_TIMEOUT']);
      expect(body.error.requestId).toBe('drip-body');
    });

    it('an idle kept-alive connection is closed by the server', async () => {
      const answer = await dripUntilClosed(
        port,
        'GET /v1/algorithms HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n',
        '',
      );
      expect(answer.status).toBe(200); // answered, then closed while the client stayed silent
    });
  });
});
