import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { algorithms } from '@hashq/native';
import type { INestApplication } from '@nestjs/common';
import type { Client } from 'pg';
import request from 'supertest';

import { createApiTestbed } from './helpers/api';
import type { TestEnv } from './helpers/env';

/** Every client mistake is a 4xx with { error: { code, message, details } } and creates no job. */
describe('POST /v1/jobs bad input (e2e)', () => {
  let env: TestEnv;
  let app: INestApplication;
  let db: Client;
  let close: () => Promise<void>;
  let outside: string;
  let file: string;

  const all = algorithms();
  const xof = all.find((a) => a.xof && !a.customizable)!;
  const fixed = all.find((a) => !a.xof)!;
  const customizable = all.find((a) => a.customizable)!;

  beforeAll(async () => {
    ({ env, app, db, close } = await createApiTestbed());
    file = join(env.fileRoot, 'data.bin');
    await writeFile(file, Buffer.alloc(100, 1));
    await mkdir(join(env.fileRoot, 'folder'));
    outside = await mkdtemp(join(tmpdir(), 'hashq-outside-'));
    await writeFile(join(outside, 'secret.txt'), 'secret');
    await symlink(join(outside, 'secret.txt'), join(env.fileRoot, 'link-out'));
    await symlink(file, join(env.fileRoot, 'link-in'));
  });

  afterAll(async () => {
    await close?.();
    if (outside) await rm(outside, { recursive: true, force: true });
  });

  const source = () => ({ type: 'file', path: file });
  const post = (body: unknown) =>
    request(app.getHttpServer())
      .post('/v1/jobs')
      .send(body as object);

  async function expectError(res: request.Response, status: number, code: string): Promise<void> {
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
    expect(typeof res.body.error.message).toBe('string');
    expect(res.body.error).toHaveProperty('details');
  }

  afterEach(async () => {
    const { rows } = await db.query('SELECT count(*)::int AS n FROM jobs');
    expect(rows[0].n).toBe(0);
  });

  it('malformed JSON → 400 MALFORMED_JSON', async () => {
    const res = await request(app.getHttpServer())
      .post('/v1/jobs')
      .set('Content-Type', 'application/json')
      .send('{"source": {"type": "file",');
    await expectError(res, 400, 'MALFORMED_JSON');
  });

  it.each([
    ['missing source', () => ({ algorithms: ['sha256'] })],
    ['source null', () => ({ source: null, algorithms: ['sha256'] })],
    ['missing algorithms', () => ({ source: source() })],
    ['empty body', () => ({})],
    ['algorithms not an array', () => ({ source: source(), algorithms: 'sha256' })],
    ['algorithm not a string', () => ({ source: source(), algorithms: [256] })],
    ['no algorithm', () => ({ source: source(), algorithms: [] })],
    [
      'more than 8 algorithms',
      () => ({ source: source(), algorithms: all.slice(0, 9).map((a) => a.name) }),
    ],
    [
      'outputLength as a string',
      () => ({ source: source(), algorithms: [xof.name], outputLength: '64' }),
    ],
    ['outputLength zero', () => ({ source: source(), algorithms: [xof.name], outputLength: 0 })],
    [
      'outputLength fractional',
      () => ({ source: source(), algorithms: [xof.name], outputLength: 1.5 }),
    ],
    ['priority out of range', () => ({ source: source(), algorithms: ['sha256'], priority: 0 })],
    [
      'priority as a string',
      () => ({ source: source(), algorithms: ['sha256'], priority: 'high' }),
    ],
    [
      'customization not hex',
      () => ({ source: source(), algorithms: ['sha256'], customization: 'xyz' }),
    ],
    [
      'expected not an object',
      () => ({ source: source(), algorithms: ['sha256'], expected: 'abc' }),
    ],
    ['unknown field', () => ({ source: source(), algorithms: ['sha256'], color: 'blue' })],
    ['body is an array', () => [{ source: source(), algorithms: ['sha256'] }]],
  ])('%s → 400 VALIDATION_FAILED', async (_name, body) => {
    const res = await post(body());
    await expectError(res, 400, 'VALIDATION_FAILED');
    expect(Array.isArray(res.body.error.details)).toBe(true);
  });

  it('unknown algorithm → 400 UNKNOWN_ALGORITHM listing the known ones', async () => {
    const res = await post({ source: source(), algorithms: ['sha256', 'sha7'] });
    await expectError(res, 400, 'UNKNOWN_ALGORITHM');
    expect(res.body.error.details.unknown).toEqual(['sha7']);
    expect(res.body.error.details.known).toEqual(all.map((a) => a.name));
  });

  it('duplicate algorithm → 400 DUPLICATE_ALGORITHM', async () => {
    const res = await post({ source: source(), algorithms: ['sha256', 'sha1', 'sha256'] });
    await expectError(res, 400, 'DUPLICATE_ALGORITHM');
    expect(res.body.error.details.duplicates).toEqual(['sha256']);
  });

  it('outputLength on a non-XOF → 400 OUTPUT_LENGTH_NOT_SUPPORTED', async () => {
    const res = await post({
      source: source(),
      algorithms: [xof.name, fixed.name],
      outputLength: 64,
    });
    await expectError(res, 400, 'OUTPUT_LENGTH_NOT_SUPPORTED');
    expect(res.body.error.details.algorithms).toEqual([fixed.name]);
  });

  it('customization on a non-customizable algorithm → 400 CUSTOMIZATION_NOT_SUPPORTED', async () => {
    const res = await post({ source: source(), algorithms: [fixed.name], customization: '6869' });
    await expectError(res, 400, 'CUSTOMIZATION_NOT_SUPPORTED');
  });

  it('customization on a customizable algorithm is accepted', async () => {
    expect(customizable).toBeDefined();
    const res = await post({
      source: source(),
      algorithms: [customizable.name],
      customization: '6869',
    });
    expect(res.status).toBe(202);
    expect(res.body.options.customization).toBe('6869');
    await db.query('DELETE FROM jobs');
  });

  it.each([
    ['for an algorithm the job does not use', () => ({ sha1: 'ab'.repeat(20) })],
    ['of the wrong length', () => ({ sha256: 'ab'.repeat(31) })],
    ['that is not hex', () => ({ sha256: 'zz'.repeat(32) })],
    ['that is not a string', () => ({ sha256: 42 })],
  ])('expected digest %s → 400 INVALID_EXPECTED_DIGEST', async (_name, expected) => {
    const res = await post({ source: source(), algorithms: ['sha256'], expected: expected() });
    await expectError(res, 400, 'INVALID_EXPECTED_DIGEST');
  });

  it.each([
    ['a number', () => 42],
    ['an array', () => [file]],
    ['an unsupported type', () => ({ type: 'ftp', path: file })],
    ['a missing path', () => ({ type: 'file' })],
    ['a path that is not a string', () => ({ type: 'file', path: 7 })],
    ['a relative path', () => ({ type: 'file', path: 'data.bin' })],
    ['an extra field', () => ({ type: 'file', path: file, mode: 'fast' })],
    ['a URL of an unsupported scheme', () => 'ftp://example.com/x'],
    ['a string that is no URL', () => 'data.bin'],
    ['a file URL with a host', () => `file://otherhost${file}`],
  ])('source as %s → 400 INVALID_SOURCE', async (_name, value) => {
    const res = await post({ source: value(), algorithms: ['sha256'] });
    await expectError(res, 400, 'INVALID_SOURCE');
  });

  it.each([
    ['a file outside the roots', () => join(outside, 'secret.txt')],
    [
      'a path with .. leading out',
      () => `${env.fileRoot}/../${outside.split('/').pop()}/secret.txt`,
    ],
    ['a symlink inside a root pointing out of it', () => join(env.fileRoot, 'link-out')],
    ['/etc/passwd', () => '/etc/passwd'],
  ])('%s → 403 PATH_OUTSIDE_ROOTS', async (_name, path) => {
    const res = await post({ source: { type: 'file', path: path() }, algorithms: ['sha256'] });
    await expectError(res, 403, 'PATH_OUTSIDE_ROOTS');
  });

  it('a file:// URL outside the roots → 403 PATH_OUTSIDE_ROOTS', async () => {
    const res = await post({
      source: `file://${join(outside, 'secret.txt')}`,
      algorithms: ['sha256'],
    });
    await expectError(res, 403, 'PATH_OUTSIDE_ROOTS');
  });

  it('a missing file → 422 SOURCE_NOT_FOUND', async () => {
    const res = await post({
      source: { type: 'file', path: join(env.fileRoot, 'nope.bin') },
      algorithms: ['sha256'],
    });
    await expectError(res, 422, 'SOURCE_NOT_FOUND');
    const url = await post({
      source: `file://${join(env.fileRoot, 'nope.bin')}`,
      algorithms: ['sha256'],
    });
    await expectError(url, 422, 'SOURCE_NOT_FOUND');
  });

  it('a folder → 422 NOT_A_REGULAR_FILE', async () => {
    const res = await post({
      source: { type: 'file', path: join(env.fileRoot, 'folder') },
      algorithms: ['sha256'],
    });
    await expectError(res, 422, 'NOT_A_REGULAR_FILE');
  });

  it('a symlink to a file inside the roots is accepted and stored as its target', async () => {
    const res = await post({
      source: { type: 'file', path: join(env.fileRoot, 'link-in') },
      algorithms: ['sha256'],
    });
    expect(res.status).toBe(202);
    expect(res.body.source.path).toBe(file);
    expect(res.body.progress.totalBytes).toBe(100);
    await db.query('DELETE FROM jobs');
  });

  it('an Idempotency-Key longer than 255 characters → 400 INVALID_IDEMPOTENCY_KEY', async () => {
    const res = await request(app.getHttpServer())
      .post('/v1/jobs')
      .set('Idempotency-Key', 'k'.repeat(256))
      .send({ source: source(), algorithms: ['sha256'] });
    await expectError(res, 400, 'INVALID_IDEMPOTENCY_KEY');
  });

  it.each([
    ['an unknown status', '?status=done'],
    ['a limit of 0', '?limit=0'],
    ['a limit above 100', '?limit=101'],
    ['a non-numeric limit', '?limit=ten'],
    ['a forged cursor', '?cursor=bm90LWEtdXVpZA'],
    ['an unknown parameter', '?sort=asc'],
  ])('GET /v1/jobs with %s → 400 VALIDATION_FAILED', async (_name, query) => {
    const res = await request(app.getHttpServer()).get(`/v1/jobs${query}`);
    await expectError(res, 400, 'VALIDATION_FAILED');
  });

  it('a body over 100 kB → 413 PAYLOAD_TOO_LARGE', async () => {
    const res = await post({
      source: source(),
      algorithms: ['sha256'],
      padding: 'x'.repeat(200 * 1024),
    });
    await expectError(res, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('a body that is not JSON → 400 VALIDATION_FAILED (nothing parsed, fields missing)', async () => {
    const res = await request(app.getHttpServer())
      .post('/v1/jobs')
      .set('Content-Type', 'text/plain')
      .send('sha256 please');
    await expectError(res, 400, 'VALIDATION_FAILED');
  });

  it('an unknown route → 404 NOT_FOUND in the same error shape', async () => {
    const res = await request(app.getHttpServer()).get('/v1/nothing');
    await expectError(res, 404, 'NOT_FOUND');
  });
});
