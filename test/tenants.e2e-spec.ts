/**
 * Tenants cannot see each other (issue 15): idempotency keys are per tenant, a guessed id of
 * another tenant's job or session is 404 exactly like a missing one and changes nothing, lists
 * and their filters show the caller's own rows only.
 */
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import type { INestApplication } from '@nestjs/common';
import { Client } from 'pg';
import request from 'supertest';

import { createApiApp } from './helpers/api';
import { createTestEnv, createTestKey, type TestEnv } from './helpers/env';
import { TUS } from './helpers/tus';

describe('tenants: isolation of jobs, sessions and keys (e2e, real PostgreSQL + Redis)', () => {
  let env: TestEnv;
  let app: INestApplication;
  let db: Client;
  let file: string;
  const auth: Record<'a' | 'b', Record<string, string>> = { a: {}, b: {} };
  const http = () => request(app.getHttpServer());
  const submit = (tenant: 'a' | 'b', body: object, idempotencyKey?: string) => {
    const req = http().post('/v1/jobs').set(auth[tenant]);
    if (idempotencyKey) req.set('Idempotency-Key', idempotencyKey);
    return req.send(body);
  };
  const jobBody = (algorithms = ['sha256']) => ({
    source: { type: 'file', path: file },
    algorithms,
  });

  beforeAll(async () => {
    env = await createTestEnv();
    app = await createApiApp(env, { attachKey: false });
    db = new Client({ connectionString: env.databaseUrl });
    await db.connect();
    file = join(env.fileRoot, 'data.bin');
    await writeFile(file, 'tenant data');
    for (const tenant of ['a', 'b'] as const) {
      const { key } = await createTestKey(env, {
        tenantId: `tenant-${tenant}`,
        createTenant: true,
        scopes: ['jobs:read', 'jobs:write', 'benchmarks:read'],
      });
      auth[tenant] = { Authorization: `Bearer ${key}` };
    }
  });

  afterAll(async () => {
    await db?.end();
    await app?.close();
    await env?.cleanup();
  });

  it('keeps idempotency keys per tenant: the same key in two tenants makes two jobs', async () => {
    const key = 'nightly-2026-12-03';
    const a = await submit('a', jobBody(), key).expect(202);
    const b = await submit('b', jobBody(['sha512']), key).expect(202); // another body: no 409 across tenants
    expect(b.body.id).not.toBe(a.body.id);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    const replayA = await submit('a', jobBody(), key).expect(202);
    expect(replayA.body.id).toBe(a.body.id);
    expect(replayA.headers['idempotent-replayed']).toBe('true');
    const replayB = await submit('b', jobBody(['sha512']), key).expect(202);
    expect(replayB.body.id).toBe(b.body.id);
    // a conflicting reuse is still a 409 within one tenant, naming that tenant's job only
    const conflict = await submit('b', jobBody(['md5']), key).expect(409);
    expect(conflict.body.error.details).toEqual({ jobId: b.body.id });
    const { rows } = await db.query(
      `SELECT tenant_id, algorithms FROM jobs WHERE idempotency_key = $1 ORDER BY tenant_id`,
      [key],
    );
    expect(rows).toEqual([
      { tenant_id: 'tenant-a', algorithms: ['sha256'] },
      { tenant_id: 'tenant-b', algorithms: ['sha512'] },
    ]);
  });

  it("answers a guessed id of another tenant's job exactly like a missing one, and cancels nothing", async () => {
    const { body: job } = await submit('a', jobBody()).expect(202);
    const missing = randomUUID();
    const strip = (body: unknown, id: string) =>
      JSON.stringify(body)
        .replace(/"requestId":"[^"]*"/, '"requestId":"<request>"')
        .replaceAll(id, '<id>');

    const get = await http().get(`/v1/jobs/${job.id}`).set(auth.b).expect(404);
    const getMissing = await http().get(`/v1/jobs/${missing}`).set(auth.b).expect(404);
    expect(strip(get.body, job.id)).toBe(strip(getMissing.body, missing));

    const cancel = await http().post(`/v1/jobs/${job.id}/cancel`).set(auth.b).expect(404);
    const cancelMissing = await http().post(`/v1/jobs/${missing}/cancel`).set(auth.b).expect(404);
    expect(strip(cancel.body, job.id)).toBe(strip(cancelMissing.body, missing));

    const { rows } = await db.query(`SELECT status, cancel_requested FROM jobs WHERE id = $1`, [
      job.id,
    ]);
    expect(rows).toEqual([{ status: 'queued', cancel_requested: false }]);
    await http().get(`/v1/jobs/${job.id}`).set(auth.a).expect(200);
    await http().post(`/v1/jobs/${job.id}/cancel`).set(auth.a).expect(200);
  });

  it("lists only the caller's jobs, with the status filter and the cursor inside its tenant", async () => {
    for (let i = 0; i < 3; i++) await submit('a', jobBody()).expect(202);
    for (let i = 0; i < 2; i++) await submit('b', jobBody()).expect(202);
    const owned = async (tenant: string) =>
      (
        await db.query(
          `SELECT id FROM jobs WHERE tenant_id = $1 ORDER BY created_at DESC, id DESC`,
          [tenant],
        )
      ).rows.map((row: { id: string }) => row.id);

    for (const tenant of ['a', 'b'] as const) {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res: request.Response = await http()
          .get(`/v1/jobs?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
          .set(auth[tenant])
          .expect(200);
        seen.push(...(res.body.items as { id: string }[]).map((item) => item.id));
        cursor = res.body.nextCursor;
      } while (cursor);
      expect(seen).toEqual(await owned(`tenant-${tenant}`));
    }
    const canceled = await http().get('/v1/jobs?status=canceled').set(auth.b).expect(200);
    expect(canceled.body.items).toEqual([]); // tenant a has a canceled job; b sees none
    const canceledA = await http().get('/v1/jobs?status=canceled').set(auth.a).expect(200);
    expect(canceledA.body.items).toHaveLength(1);
  });

  it("refuses another tenant's digest session as missing: no HEAD, GET, PATCH or DELETE", async () => {
    const created = await http()
      .post('/v1/digest-sessions')
      .set(TUS)
      .set(auth.a)
      .set({
        'Upload-Length': '6',
        'Upload-Metadata': `algorithms ${Buffer.from('sha256').toString('base64')}`,
      })
      .expect(201);
    const path = created.headers.location as string;
    await http().head(path).set(TUS).set(auth.b).expect(404);
    const get = await http().get(path).set(auth.b).expect(404);
    expect(get.body.error.code).toBe('SESSION_NOT_FOUND');
    await http()
      .patch(path)
      .set(TUS)
      .set(auth.b)
      .set({ 'Content-Type': 'application/offset+octet-stream', 'Upload-Offset': '0' })
      .send(Buffer.from('abc'))
      .expect(404);
    await http().delete(path).set(TUS).set(auth.b).expect(404);
    const { rows } = await db.query(
      `SELECT upload_offset, tenant_id FROM digest_sessions WHERE id = $1`,
      [path.split('/').pop()],
    );
    expect(rows).toEqual([{ upload_offset: '0', tenant_id: 'tenant-a' }]);
    await http().head(path).set(TUS).set(auth.a).expect(200);
  });

  it("lists only the caller's benchmark runs", async () => {
    await db.query(
      `INSERT INTO benchmark_runs (status, arch, request, tenant_id) VALUES ('queued', 'x64', '{}', 'tenant-a')`,
    );
    const a = await http().get('/v1/benchmarks').set(auth.a).expect(200);
    const b = await http().get('/v1/benchmarks').set(auth.b).expect(200);
    expect(a.body.items).toHaveLength(1);
    expect(b.body.items).toEqual([]);
    await http().get(`/v1/benchmarks/${a.body.items[0].id}`).set(auth.b).expect(404);
  });
});
