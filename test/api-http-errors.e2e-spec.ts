/**
 * Every error the API answers is in the JSON error format with a code the README documents:
 * requests Node's HTTP parser refuses before Express sees them (sent on a raw socket: supertest
 * cannot send them), a file name too long for the file system, and the README's error table
 * against the codes the API's error type allows.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { join } from 'node:path';

import { projectRoot } from '@hashq/config';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';

import { API_ERROR_CODES } from '../apps/api/src/common/api-error';
import { createApiApp } from './helpers/api';
import { createTestEnv, type TestEnv } from './helpers/env';

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends `raw` on a fresh connection and reads the whole answer until the server closes it. */
function sendRaw(port: number, raw: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer within 10 s')));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const [head, ...rest] = text.split('\r\n\r\n');
      const [statusLine, ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => [
          line.slice(0, line.indexOf(':')).toLowerCase(),
          line.slice(line.indexOf(':') + 1).trim(),
        ]),
      );
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') });
    });
    socket.write(raw, 'latin1');
  });
}

/** The codes of the README's error table (### Errors), by status. */
function readmeErrorCodes(): Map<string, number> {
  const readme = readFileSync(join(projectRoot(), 'README.md'), 'utf8');
  const section = readme.slice(
    readme.indexOf('### Errors'),
    readme.indexOf('\n## ', readme.indexOf('### Errors')),
  );
  const codes = new Map<string, number>();
  for (const row of section.matchAll(/^\| (\d{3}) \| (.*) \|$/gm)) {
    const listed = row[2].replace(/\([^)]*\)/g, ''); // the codes, without their explanations in parentheses
    for (const code of listed.matchAll(/`([A-Z0-9_]+)`/g)) codes.set(code[1], Number(row[1]));
  }
  return codes;
}

describe('errors in the JSON format, all documented (e2e)', () => {
  let env: TestEnv;
  let app: INestApplication;
  let port: number;

  beforeAll(async () => {
    env = await createTestEnv();
    app = await createApiApp(env);
    await app.listen(0, '127.0.0.1');
    port = (app.getHttpServer().address() as AddressInfo).port;
    await writeFile(join(env.fileRoot, 'a.bin'), 'abc');
  });

  afterAll(async () => {
    await app?.close();
    await env?.cleanup();
  });

  function expectJsonError(res: RawResponse, status: number, code: string): void {
    expect({ status: res.status, type: res.headers['content-type'] }).toEqual({
      status,
      type: 'application/json; charset=utf-8',
    });
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
    const body = JSON.parse(res.body);
    expect(body.error).toMatchObject({ code, message: expect.any(String) });
    expect(body.error).toHaveProperty('details');
    expect(readmeErrorCodes().get(code)).toBe(status);
  }

  it('a URL over 16 kB → 431 HEADERS_TOO_LARGE in the error format', async () => {
    const res = await sendRaw(
      port,
      `GET /v1/jobs?cursor=${'a'.repeat(17 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`,
    );
    expectJsonError(res, 431, 'HEADERS_TOO_LARGE');
  });

  it('a control character in a header value → 400 MALFORMED_REQUEST in the error format', async () => {
    const res = await sendRaw(port, 'GET /health HTTP/1.1\r\nHost: x\r\nX-Probe: a\x01b\r\n\r\n');
    expectJsonError(res, 400, 'MALFORMED_REQUEST');
  });

  it('a request line that is not HTTP → 400 MALFORMED_REQUEST in the error format', async () => {
    const res = await sendRaw(port, 'HELLO\r\n\r\n');
    expectJsonError(res, 400, 'MALFORMED_REQUEST');
  });

  it('the server stays up and answers the next request', async () => {
    await request(app.getHttpServer()).get('/v1/algorithms').expect(200);
  });

  it('no X-Powered-By header', async () => {
    const ok = await request(app.getHttpServer()).get('/v1/algorithms').expect(200);
    const missing = await request(app.getHttpServer()).get('/v1/nothing').expect(404);
    for (const res of [ok, missing]) expect(res.headers['x-powered-by']).toBeUndefined();
  });

  it('a file name longer than the file system allows → 422 SOURCE_NOT_FOUND (no such file can exist)', async () => {
    const res = await request(app.getHttpServer())
      .post('/v1/jobs')
      .send({
        source: { type: 'file', path: join(env.fileRoot, 'n'.repeat(300)) },
        algorithms: ['sha256'],
      });
    expect([res.status, res.body.error?.code]).toEqual([422, 'SOURCE_NOT_FOUND']);
    expect(res.body.error.message).toMatch(/too long/);
  });

  it('the README error table lists exactly the codes the API can answer with', () => {
    expect([...readmeErrorCodes().keys()].sort()).toEqual([...API_ERROR_CODES].sort());
  });
});
