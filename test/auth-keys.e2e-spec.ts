/**
 * Keys end to end (issue 15): rotation with two live keys, what a tenant's admin may do, what is
 * stored of a key, the `npm run keys` command, and HASHQ_AUTH=off (refused off loopback). The
 * command and the API processes run from dist/ (npm run build first, as npm test does).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import type { INestApplication } from '@nestjs/common';
import { Client } from 'pg';
import request from 'supertest';

import { createApiApp } from './helpers/api';
import { startApiProcess } from './helpers/api-process';
import { API_MAIN } from './helpers/api-process';
import { createTestEnv, createTestKey, type TestEnv } from './helpers/env';
import { REPO_ROOT, WorkerProcess } from './helpers/worker-process';

const KEYS_CLI = join(REPO_ROOT, 'dist', 'apps', 'api', 'src', 'auth', 'keys-cli.js');
const run = promisify(execFile);

describe('API keys: rotation, tenant admins, storage, the keys command, HASHQ_AUTH=off', () => {
  let env: TestEnv;
  let app: INestApplication;
  let db: Client;
  const http = () => request(app.getHttpServer());
  const operator = () => ({ Authorization: `Bearer ${env.apiKey}` });
  const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
  const keysCli = (...args: string[]) =>
    run(process.execPath, [KEYS_CLI, ...args], { env: { ...process.env, ...env.env } });

  beforeAll(async () => {
    env = await createTestEnv();
    app = await createApiApp(env, { attachKey: false });
    db = new Client({ connectionString: env.databaseUrl });
    await db.connect();
    await http()
      .post('/v1/tenants')
      .set(operator())
      .send({ id: 'rot', name: 'Rotation' })
      .expect(201);
  });

  afterAll(async () => {
    await db?.end();
    await app?.close();
    await env?.cleanup();
  });

  it('rotates: two keys work at once, the old one is refused as soon as it is revoked', async () => {
    const create = (name: string) =>
      http()
        .post('/v1/keys')
        .set(operator())
        .send({ name, scopes: ['jobs:read'], tenant: 'rot' })
        .expect(201);
    const { body: old } = await create('ci (old)');
    const { body: next } = await create('ci (new)');
    expect(old.key).toMatch(/^hq_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    await http().get('/v1/jobs').set(bearer(old.key)).expect(200);
    await http().get('/v1/jobs').set(bearer(next.key)).expect(200);

    const revoked = await http().delete(`/v1/keys/${old.id}`).set(operator()).expect(200);
    expect(revoked.body.revokedAt).not.toBeNull();
    const refused = await http().get('/v1/jobs').set(bearer(old.key)).expect(401);
    expect(refused.body.error.code).toBe('UNAUTHORIZED');
    await http().get('/v1/jobs').set(bearer(next.key)).expect(200);

    const list = await http().get('/v1/keys?tenant=rot').set(operator()).expect(200);
    expect(list.body.items.map((k: { id: string }) => k.id)).toEqual([old.id, next.id]);
    for (const item of list.body.items) {
      expect(Object.keys(item).sort()).toEqual(
        [
          'createdAt',
          'expiresAt',
          'id',
          'lastUsedAt',
          'name',
          'revokedAt',
          'scopes',
          'tenant',
        ].sort(),
      );
    }
  });

  it('stores only a hash of the secret, and the last use at most once a minute', async () => {
    const { body } = await http()
      .post('/v1/keys')
      .set(operator())
      .send({ name: 'stored', scopes: ['jobs:read'] })
      .expect(201);
    const secret = (body.key as string).slice(20);
    await http().get('/v1/jobs').set(bearer(body.key)).expect(200);
    await http().get('/v1/jobs').set(bearer(body.key)).expect(200);
    const { rows } = await db.query(
      `SELECT to_jsonb(k)::text AS row, last_used_at FROM api_keys k WHERE id = $1`,
      [body.id],
    );
    expect(rows[0].row).not.toContain(secret);
    expect(rows[0].row).not.toContain(Buffer.from(secret).toString('hex'));
    // the write of last_used_at is not awaited by the request: wait for it
    for (let i = 0; i < 50 && !(await lastUsed(db, body.id)); i++) await sleep(20);
    const first = await lastUsed(db, body.id);
    expect(first).not.toBeNull();
    await http().get('/v1/jobs').set(bearer(body.key)).expect(200);
    expect(await lastUsed(db, body.id)).toEqual(first);
  });

  it("lets a tenant's admin manage its own tenant's keys only", async () => {
    const { key } = await createTestKey(env, { tenantId: 'rot', scopes: ['admin'] });
    const tenantAdmin = bearer(key);
    const mine = await http()
      .post('/v1/keys')
      .set(tenantAdmin)
      .send({ name: 'uploader', scopes: ['jobs:write'] })
      .expect(201);
    expect(mine.body.tenant).toBe('rot');
    const list = await http().get('/v1/keys').set(tenantAdmin).expect(200);
    expect(new Set(list.body.items.map((k: { tenant: string }) => k.tenant))).toEqual(
      new Set(['rot']),
    );
    const foreign = await http()
      .post('/v1/keys')
      .set(tenantAdmin)
      .send({ name: 'sneaky', scopes: ['admin'], tenant: 'default' })
      .expect(404);
    expect(foreign.body.error.code).toBe('TENANT_NOT_FOUND');
    const operatorKeyId = env.apiKey.slice(3, 19);
    await http().delete(`/v1/keys/${operatorKeyId}`).set(tenantAdmin).expect(404);
    await http().get('/v1/jobs').set(operator()).expect(200);
    const tenants = await http().get('/v1/tenants').set(tenantAdmin).expect(403);
    expect(tenants.body.error.code).toBe('SCOPE_MISSING');
  });

  it('creates tenants with file roots inside HASHQ_FILE_ROOTS only', async () => {
    const inside = join(env.fileRoot, 'acme');
    const ok = await http()
      .post('/v1/tenants')
      .set(operator())
      .send({ id: 'acme', name: 'ACME', fileRoots: [inside], maxRunningJobs: 2 })
      .expect(201);
    expect(ok.body).toMatchObject({ id: 'acme', fileRoots: [inside], maxRunningJobs: 2 });
    const outside = await http()
      .post('/v1/tenants')
      .set(operator())
      .send({ id: 'evil', name: 'Evil', fileRoots: ['/etc', `${env.fileRoot}/../x`] })
      .expect(400);
    expect(outside.body.error.details.outside).toHaveLength(2);
    const again = await http().post('/v1/tenants').set(operator()).send({ id: 'acme', name: 'x' });
    expect([again.status, again.body.error.code]).toEqual([409, 'TENANT_EXISTS']);
  });

  it('on a loopback HOST, /metrics and /docs are open by default and the API still is not', async () => {
    const local = await createApiApp(
      { ...env, env: { ...env.env, HOST: '127.0.0.1' } },
      { attachKey: false },
    );
    try {
      await request(local.getHttpServer()).get('/metrics').expect(200);
      await request(local.getHttpServer()).get('/docs/json').expect(200);
      await request(local.getHttpServer()).get('/v1/jobs').expect(401);
    } finally {
      await local.close();
    }
  });

  it('refuses keys that expire in the past and unknown scopes', async () => {
    const past = await http()
      .post('/v1/keys')
      .set(operator())
      .send({ name: 'late', scopes: ['jobs:read'], expiresAt: '2000-01-01T00:00:00Z' })
      .expect(400);
    expect(past.body.error.code).toBe('VALIDATION_FAILED');
    await http()
      .post('/v1/keys')
      .set(operator())
      .send({ name: 'odd', scopes: ['jobs:delete'] })
      .expect(400);
  });

  it('npm run keys: create (with its tenant), list, revoke; local-key keeps one working key', async () => {
    const created = await keysCli(
      'create',
      '--tenant',
      'cli-made',
      '--create-tenant',
      '--name',
      'from the shell',
      '--scopes',
      'jobs:read,jobs:write',
    );
    const key = created.stdout.trim();
    expect(key).toMatch(/^hq_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    const id = key.slice(3, 19);
    const listed = await keysCli('list', '--tenant', 'cli-made');
    expect(listed.stdout).toContain(
      `${id}  cli-made  jobs:read,jobs:write  active  from the shell`,
    );
    await keysCli('revoke', id);
    await http().get('/v1/jobs').set(bearer(key)).expect(401);

    const dir = await mkdtemp(join(tmpdir(), 'hashq-keys-'));
    try {
      const file = join(dir, 'api-key');
      await keysCli('local-key', file);
      const first = (await readFile(file, 'utf8')).trim();
      await http().get('/v1/tenants').set(bearer(first)).expect(200); // an operator key
      await keysCli('local-key', file);
      expect((await readFile(file, 'utf8')).trim()).toBe(first);
      await keysCli('revoke', first.slice(3, 19));
      await keysCli('local-key', file);
      expect((await readFile(file, 'utf8')).trim()).not.toBe(first);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('HASHQ_AUTH=off: refused on every interface, local use without keys on loopback', async () => {
    const refused = new WorkerProcess(
      { ...env.env, HASHQ_AUTH: 'off', HOST: '0.0.0.0', PORT: '0' },
      API_MAIN,
    );
    expect((await refused.exited).code).not.toBe(0);
    expect(refused.lines.map((line) => JSON.stringify(line)).join('\n')).toContain(
      'HASHQ_AUTH=off is for local use only',
    );

    const api = await startApiProcess({ ...env.env, HASHQ_AUTH: 'off', HOST: '127.0.0.1' });
    try {
      const res = await fetch(`${api.url}/v1/tenants`);
      expect(res.status).toBe(200); // the default tenant with every scope
    } finally {
      api.process.kill('SIGTERM');
      await api.process.exited;
    }
  });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function lastUsed(db: Client, id: string): Promise<Date | null> {
  const { rows } = await db.query(`SELECT last_used_at FROM api_keys WHERE id = $1`, [id]);
  return rows[0].last_used_at as Date | null;
}
