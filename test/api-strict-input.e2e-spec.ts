/**
 * Bodies and queries the API refuses instead of bending: JSON nested too deep for the
 * validators, and the lenient forms an adversarial probe found accepted. Every refusal is a 4xx
 * in the error format, and creates no job.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import type { INestApplication } from '@nestjs/common';
import { Client } from 'pg';
import request from 'supertest';

import { MAX_BODY_DEPTH } from '../apps/api/src/common/validation.pipe';
import { createApiApp } from './helpers/api';
import { type TestEnv, createTestEnv } from './helpers/env';

/** `{"k":{"k":…{}…}}` as JSON text: `levels` nested objects (the outermost one included). */
function nestedObjects(levels: number, key = 'k'): string {
  return `${`{"${key}":`.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;
}

describe('strict input (e2e)', () => {
  let env: TestEnv;
  let app: INestApplication;
  let db: Client;
  let file: string;

  beforeAll(async () => {
    env = await createTestEnv();
    app = await createApiApp(env);
    db = new Client({ connectionString: env.databaseUrl });
    await db.connect();
    file = join(env.fileRoot, 'data.bin');
    await writeFile(file, 'abc');
  });

  afterAll(async () => {
    await db?.end();
    await app?.close();
    await env?.cleanup();
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
    it.each([2_500, 4_000])('%i levels of objects in a job body → 400 INVALID_BODY', async (levels) => {
      const json = `{"source":${sourceJson()},"algorithms":["sha256"],"expected":${nestedObjects(levels)}}`;
      expect(json.length).toBeLessThan(100 * 1024);
      const res = await postRaw('/v1/jobs', json);
      expectError(res, 400, 'INVALID_BODY');
      expect(res.body.error.details).toEqual({ maxDepth: MAX_BODY_DEPTH });
    });

    it.each([4_000, 49_000])('%i levels of arrays in a benchmark body → 400 INVALID_BODY', async (levels) => {
      const res = await postRaw('/v1/benchmarks', `{"lengths":${'['.repeat(levels)}${']'.repeat(levels)}}`);
      expectError(res, 400, 'INVALID_BODY');
    });

    it(`${MAX_BODY_DEPTH} levels are validated as usual, ${MAX_BODY_DEPTH + 1} are refused`, async () => {
      // the body is level 1, `expected` level 2: its value holds the remaining levels
      const body = (levels: number) => `{"source":${sourceJson()},"algorithms":["sha256"],"expected":${nestedObjects(levels - 1, 'sha256')}}`;
      expectError(await postRaw('/v1/jobs', body(MAX_BODY_DEPTH)), 400, 'INVALID_EXPECTED_DIGEST');
      expectError(await postRaw('/v1/jobs', body(MAX_BODY_DEPTH + 1)), 400, 'INVALID_BODY');
    });
  });
});
