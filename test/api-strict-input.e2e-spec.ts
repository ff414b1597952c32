/**
 * Bodies and queries the API refuses instead of bending: JSON nested too deep for the
 * validators, and the lenient forms an adversarial probe found accepted. Every refusal is a 4xx
 * in the error format, and creates no job.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import type { INestApplication } from '@nestjs/common';
import type { Client } from 'pg';
import request from 'supertest';

import { MAX_ERROR_BYTES } from '../apps/api/src/common/all-exceptions.filter';
import { MAX_BODY_DEPTH, MAX_DETAILS } from '../apps/api/src/common/validation.pipe';
import { createApiTestbed } from './helpers/api';
import type { TestEnv } from './helpers/env';

/** `{"k":{"k":…{}…}}` as JSON text: `levels` nested objects (the outermost one included). */
function nestedObjects(levels: number, key = 'k'): string {
  return `${`{"${key}":`.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;
}

describe('strict input (e2e)', () => {
  let env: TestEnv;
  let app: INestApplication;
  let db: Client;
  let close: () => Promise<void>;
  let file: string;

  beforeAll(async () => {
    // Bodies of up to 100 kB are parsed (the default is 64 KiB): the validators must hold up
    // against the largest bodies a route takes (batch manifests are larger still).
    ({ env, app, db, close } = await createApiTestbed({ API_JSON_MAX_BYTES: String(100 * 1024) }));
    file = join(env.fileRoot, 'data.bin');
    await writeFile(file, 'abc');
  });

  afterAll(async () => {
    await close?.();
  });

  afterEach(async () => {
    const { rows } = await db.query('SELECT count(*)::int AS n FROM jobs');
    expect(rows[0].n).toBe(0);
  });

  const sourceJson = () => JSON.stringify({ type: 'file', path: file });
  const postRaw = (path: string, json: string) =>
    request(app.getHttpServer()).post(path).set('Content-Type', 'application/json').send(json);

  function expectError(res: request.Response, status: number, code: string): void {
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
    expect(typeof res.body.error.message).toBe('string');
    expect(res.body.error).toHaveProperty('details');
  }

  describe('nesting depth', () => {
    it.each([2_500, 4_000])(
      '%i levels of objects in a job body → 400 INVALID_BODY',
      async (levels) => {
        const json = `{"source":${sourceJson()},"algorithms":["sha256"],"expected":${nestedObjects(levels)}}`;
        expect(json.length).toBeLessThan(100 * 1024);
        const res = await postRaw('/v1/jobs', json);
        expectError(res, 400, 'INVALID_BODY');
        expect(res.body.error.details).toEqual({ maxDepth: MAX_BODY_DEPTH });
      },
    );

    it.each([4_000, 49_000])(
      '%i levels of arrays in a benchmark body → 400 INVALID_BODY',
      async (levels) => {
        const res = await postRaw(
          '/v1/benchmarks',
          `{"lengths":${'['.repeat(levels)}${']'.repeat(levels)}}`,
        );
        expectError(res, 400, 'INVALID_BODY');
      },
    );

    it(`${MAX_BODY_DEPTH} levels are validated as usual, ${MAX_BODY_DEPTH + 1} are refused`, async () => {
      // the body is level 1, `expected` level 2: its value holds the remaining levels
      const body = (levels: number) =>
        `{"source":${sourceJson()},"algorithms":["sha256"],"expected":${nestedObjects(levels - 1, 'sha256')}}`;
      expectError(await postRaw('/v1/jobs', body(MAX_BODY_DEPTH)), 400, 'INVALID_EXPECTED_DIGEST');
      expectError(await postRaw('/v1/jobs', body(MAX_BODY_DEPTH + 1)), 400, 'INVALID_BODY');
    });
  });

  describe('lenient forms', () => {
    it.each([
      ['priority', '{"priority":null}'],
      ['s3Checksum', '{"s3Checksum":null}'],
      ['outputLength', '{"outputLength":null}'],
      ['customization', '{"customization":null}'],
      ['expected', '{"expected":null}'],
    ])(
      '%s: null → 400 VALIDATION_FAILED naming it (a field is given or left out)',
      async (field, extra) => {
        const json = `{"source":${sourceJson()},"algorithms":["sha256"],${extra.slice(1)}`;
        const res = await postRaw('/v1/jobs', json);
        expectError(res, 400, 'VALIDATION_FAILED');
        expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual([field]);
      },
    );

    it.each(['arch', 'quick', 'algorithms', 'lengths', 'implementations'])(
      'benchmark %s: null → 400 VALIDATION_FAILED',
      async (field) => {
        const res = await postRaw('/v1/benchmarks', `{"${field}":null}`);
        expectError(res, 400, 'VALIDATION_FAILED');
        expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual([field]);
      },
    );

    it.each([
      [
        '__proto__ at the top',
        (src: string) => `{"source":${src},"algorithms":["sha256"],"__proto__":{"priority":1}}`,
        '__proto__',
      ],
      [
        'constructor at the top',
        (src: string) => `{"source":${src},"algorithms":["sha256"],"constructor":"x"}`,
        'constructor',
      ],
      [
        '__proto__ in source',
        (src: string) => `{"source":${src.slice(0, -1)},"__proto__":{}},"algorithms":["sha256"]}`,
        'source.__proto__',
      ],
      [
        'constructor in expected',
        (src: string) =>
          `{"source":${src},"algorithms":["sha256"],"expected":{"constructor":"00"}}`,
        'expected.constructor',
      ],
    ])(
      '%s → 400 VALIDATION_FAILED naming the key, like any unknown key',
      async (_name, body, field) => {
        const res = await postRaw('/v1/jobs', body(sourceJson()));
        expectError(res, 400, 'VALIDATION_FAILED');
        const key = field.split('.').pop();
        expect(res.body.error.details).toEqual([
          { field, problems: [`property ${key} should not exist`] },
        ]);
      },
    );

    it('the same body with an ordinary unknown key gets the same answer', async () => {
      const res = await postRaw(
        '/v1/jobs',
        `{"source":${sourceJson()},"algorithms":["sha256"],"colour":"x"}`,
      );
      expectError(res, 400, 'VALIDATION_FAILED');
      expect(res.body.error.details).toEqual([
        { field: 'colour', problems: ['property colour should not exist'] },
      ]);
    });

    it.each(['utf-7', 'utf-16', 'UTF-32', 'iso-8859-1'])(
      'charset=%s → 415 UNSUPPORTED_MEDIA_TYPE',
      async (charset) => {
        const res = await request(app.getHttpServer())
          .post('/v1/jobs')
          .set('Content-Type', `application/json; charset=${charset}`)
          .send(`{"source":${sourceJson()},"algorithms":["sha256"]}`);
        expectError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
      },
    );

    it.each(['utf-8', 'UTF-8', '"utf-8"'])('charset=%s is accepted', async (charset) => {
      const res = await request(app.getHttpServer())
        .post('/v1/jobs')
        .set('Content-Type', `application/json; charset=${charset}`)
        .send(`{"source":${sourceJson()},"algorithms":["sha256"]}`);
      expect(res.status).toBe(202);
      await db.query('DELETE FROM jobs');
    });

    it('a form-encoded body is not parsed (JSON only) → 400 VALIDATION_FAILED, no job', async () => {
      const res = await request(app.getHttpServer())
        .post('/v1/jobs')
        .type('form')
        .send(`source=${encodeURIComponent(`file://${file}`)}&algorithms[0]=sha256`);
      expectError(res, 400, 'VALIDATION_FAILED');
    });

    it.each(['1e2', '0x10', '+5', '5.0', '%205', '5%20', ''])(
      'GET /v1/jobs?limit=%s → 400 VALIDATION_FAILED (plain decimal digits only)',
      async (limit) => {
        const res = await request(app.getHttpServer()).get(`/v1/jobs?limit=${limit}`);
        expectError(res, 400, 'VALIDATION_FAILED');
        expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual(['limit']);
      },
    );

    it('GET /v1/jobs?limit=05 is 5', async () => {
      await request(app.getHttpServer()).get('/v1/jobs?limit=05').expect(200);
    });

    it.each([
      ['a tab', (path: string) => `file://${path.replace('data', 'da\tta')}`],
      ['a newline', (path: string) => `file://${path.replace('data', 'da\nta')}`],
      ['a carriage return', (path: string) => `file://${path.replace('data', 'da\rta')}`],
      ['a leading space', (path: string) => ` file://${path}`],
      ['a trailing tab', (path: string) => `file://${path}\t`],
    ])(
      'a file URL with %s → 400 INVALID_SOURCE (never normalized to another path)',
      async (_name, url) => {
        const res = await postRaw(
          '/v1/jobs',
          JSON.stringify({ source: url(file), algorithms: ['sha256'] }),
        );
        expectError(res, 400, 'INVALID_SOURCE');
      },
    );

    it('an http URL with a tab → 400 INVALID_SOURCE, as a string and as source.url', async () => {
      const string = JSON.stringify({ source: 'https://exa\tmple.com/x', algorithms: ['sha256'] });
      expectError(await postRaw('/v1/jobs', string), 400, 'INVALID_SOURCE');
      const object = JSON.stringify({
        source: { type: 'http', url: 'https://example.com/a\nb' },
        algorithms: ['sha256'],
      });
      expectError(await postRaw('/v1/jobs', object), 400, 'INVALID_SOURCE');
    });
  });

  describe('error size', () => {
    const bytes = (res: request.Response) => Buffer.byteLength(res.text);

    it('9,000 unknown keys → the first MAX_DETAILS problems and a count of the rest, not a megabyte', async () => {
      const keys = Array.from({ length: 9000 }, (_, i) => `"k${i}":1`).join(',');
      const json = `{"source":${sourceJson()},"algorithms":["sha256"],${keys}}`;
      const res = await postRaw('/v1/jobs', json);
      expectError(res, 400, 'VALIDATION_FAILED');
      expect(res.body.error.details).toHaveLength(MAX_DETAILS);
      expect(res.body.error.details[0]).toEqual({
        field: 'k0',
        problems: ['property k0 should not exist'],
      });
      expect(res.body.error.message).toMatch(new RegExp(`and ${9000 - MAX_DETAILS} more fields$`));
      expect(bytes(res)).toBeLessThan(MAX_ERROR_BYTES);
      expect(bytes(res)).toBeLessThan(json.length / 10);
    });

    it('one 90 kB key → its name is cut in the answer', async () => {
      const key = 'x'.repeat(90_000);
      const res = await postRaw(
        '/v1/jobs',
        `{"source":${sourceJson()},"algorithms":["sha256"],"${key}":1}`,
      );
      expectError(res, 400, 'VALIDATION_FAILED');
      expect(res.body.error.details).toHaveLength(1);
      expect(res.body.error.details[0].field).toMatch(/^x+…$/);
      expect(bytes(res)).toBeLessThan(MAX_ERROR_BYTES);
    });

    it('a source that echoes 90 kB back → details dropped, the answer stays under MAX_ERROR_BYTES', async () => {
      const keys = Array.from({ length: 6000 }, (_, i) => `"field${i}":1`).join(',');
      const res = await postRaw(
        '/v1/jobs',
        `{"source":{"type":"file","path":"/x",${keys}},"algorithms":["sha256"]}`,
      );
      expectError(res, 400, 'INVALID_SOURCE');
      expect(bytes(res)).toBeLessThan(MAX_ERROR_BYTES);
      expect(res.body.error.details).toEqual({ truncated: true });
    });
  });
});
