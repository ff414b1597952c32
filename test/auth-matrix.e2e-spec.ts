/**
 * The authorization matrix (issue 15): every route the running app's Express router holds ×
 * {no key, malformed, unknown, expired, revoked, missing scope, other tenant's, right key}.
 * The routes come from the router at run time and their scopes from the controllers' metadata,
 * so a new route without @RequireScope/@PublicRoute, or one this table does not know, fails here.
 * Every refused request must leave the database as it was (rows counted before and after).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import type { INestApplication } from '@nestjs/common';
import { Client } from 'pg';
import request from 'supertest';

import { type Scope, SCOPES } from '../apps/api/src/auth/principal';
import { type RouteAccess, routeAccess } from '../apps/api/src/auth/route-scopes';
import { createApiApp } from './helpers/api';
import { createTestEnv, createTestKey, type TestEnv } from './helpers/env';
import { TUS } from './helpers/tus';

const OTHER = 'other';
/** Never called: the deliverer does not run in this test (WEBHOOK_POLL_MS of an hour). */
const HOOK_URL = 'https://hooks.example.com/hashq';
const b64 = (text: string) => Buffer.from(text).toString('base64');
const CASES = [
  'no key',
  'malformed',
  'unknown',
  'expired',
  'revoked',
  'missing scope',
  "other tenant's",
  'right key',
] as const;
type Case = (typeof CASES)[number];

/** A request of a route: method, concrete path, headers and body. */
interface Call {
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer | object;
}

/** How one route is called in the matrix and what its right key gets. */
interface RouteCase {
  scope: Scope | null;
  /** A fresh call on resources of the default tenant ("mine"). */
  call(): Promise<Call>;
  ok: number;
  /**
   * The other tenant's key (admin there): 'missing' = 404 exactly like a missing resource
   * (`missing` gives that call), 'own' = it acts on its own tenant only (`own` checks it).
   */
  other:
    | { kind: 'missing'; missing(): Call }
    | { kind: 'own'; check(res: request.Response): Promise<void> }
    | { kind: 'status'; status: number; code?: string };
}

/** A response body as text, its request id (unique to each request) left out. */
const answer = (body: unknown) =>
  JSON.stringify(body).replace(/"requestId":"[^"]*"/, '"requestId":"<request>"');

describe('authorization matrix: every route × every kind of caller', () => {
  let env: TestEnv;
  let app: INestApplication;
  let db: Client;
  const keys = {} as Record<string, string>;
  let expired: string;
  let revoked: string;
  let otherAdmin: string;
  let otherJob: string;
  let file: string;
  const counts: Record<string, number> = {};

  const http = () => request(app.getHttpServer());
  const admin = () => ({ Authorization: `Bearer ${env.apiKey}` });
  const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

  const send = (method: string, call: Call, headers: Record<string, string>) => {
    let req = (http() as unknown as Record<string, (path: string) => request.Test>)
      [method.toLowerCase()](call.path)
      .set({ ...call.headers, ...headers });
    if (call.body !== undefined) req = req.send(call.body);
    return req;
  };

  const newJob = async (): Promise<string> => {
    const res = await http()
      .post('/v1/jobs')
      .set(admin())
      .send({ source: { type: 'file', path: file }, algorithms: ['sha256'] })
      .expect(202);
    return res.body.id as string;
  };
  const newSession = async (auth = admin()): Promise<string> => {
    const res = await http()
      .post('/v1/digest-sessions')
      .set(TUS)
      .set(auth)
      .set({ 'Upload-Length': '3', 'Upload-Metadata': `algorithms ${b64('sha256')}` })
      .expect(201);
    return res.headers.location;
  };
  const newRun = async (auth = admin()): Promise<string> => {
    const res = await http().post('/v1/benchmarks').set(auth).send({ quick: true }).expect(202);
    return res.body.id as string;
  };
  /** A webhook endpoint of the default tenant (the only one: at most 16 are allowed). */
  const newWebhook = async (): Promise<string> => {
    await db.query(`DELETE FROM webhook_endpoints WHERE tenant_id = 'default'`);
    const res = await http()
      .post('/v1/webhooks')
      .set(admin())
      .send({ url: HOOK_URL, events: ['job.completed'] })
      .expect(201);
    return res.body.id as string;
  };
  const missingWebhook = (suffix = '') => ({ path: `/v1/webhooks/${randomUUID()}${suffix}` });
  const newKey = async (tenantId = 'default'): Promise<string> =>
    (await createTestKey(env, { tenantId, scopes: ['jobs:read'] })).id;

  /** What a refused request must not change. */
  const snapshot = async () =>
    (
      await db.query(`SELECT
        (SELECT count(*) FROM jobs) AS jobs,
        (SELECT count(*) FROM jobs WHERE status = 'canceled' OR cancel_requested) AS canceled,
        (SELECT count(*) FROM benchmark_runs) AS runs,
        (SELECT count(*) FROM digest_sessions) AS sessions,
        (SELECT coalesce(sum(upload_offset), 0) FROM digest_sessions) AS offsets,
        (SELECT count(*) FROM api_keys) AS keys,
        (SELECT count(*) FROM api_keys WHERE revoked_at IS NOT NULL) AS revoked,
        (SELECT count(*) FROM tenants) AS tenants,
        (SELECT count(*) FROM webhook_endpoints) AS webhooks`)
    ).rows[0] as Record<string, string>;

  const missingJob = (suffix = '') => ({ path: `/v1/jobs/${randomUUID()}${suffix}` });
  const newBatch = async (): Promise<string> => {
    const res = await http()
      .post('/v1/batches')
      .set(admin())
      .send({ source: { type: 'directory', path: env.fileRoot }, algorithms: ['sha256'] })
      .expect(202);
    return res.body.id as string;
  };
  /** A batch that ended with its listing failed: retry lists it again. */
  const failedBatch = async (): Promise<string> => {
    const id = await newBatch();
    await db.query(
      `UPDATE batches SET status = 'failed', error_code = 'SOURCE_NOT_FOUND', finished_at = now() WHERE id = $1`,
      [id],
    );
    return id;
  };
  const missingBatch = (suffix = '') => ({ path: `/v1/batches/${randomUUID()}${suffix}` });
  /** A create route: what the other tenant's key creates is its own, not found for the default tenant. */
  const createdOwn = (status: number, collection: string): RouteCase['other'] => ({
    kind: 'own',
    check: async (res) => {
      expect(res.status).toBe(status);
      await http().get(`${collection}/${res.body.id}`).set(admin()).expect(404);
    },
  });
  /** A list route: the other tenant's key lists only rows of `table` that are its own. */
  const listedOwn = (table: string): RouteCase['other'] => ({
    kind: 'own',
    check: async (res) => {
      expect(res.status).toBe(200);
      const ids = (res.body.items as { id: string }[]).map((item) => item.id);
      const owners = await db.query(`SELECT DISTINCT tenant_id FROM ${table} WHERE id = ANY($1)`, [
        ids,
      ]);
      expect(owners.rows).toEqual(ids.length === 0 ? [] : [{ tenant_id: OTHER }]);
    },
  });
  const ROUTES: Record<string, RouteCase> = {
    'GET /health': {
      scope: null,
      call: async () => ({ path: '/health' }),
      ok: 200,
      other: { kind: 'status', status: 200 },
    },
    'GET /metrics': {
      scope: 'admin',
      call: async () => ({ path: '/metrics' }),
      ok: 200,
      other: { kind: 'status', status: 200 },
    },
    'GET /v1/algorithms': {
      scope: 'jobs:read',
      call: async () => ({ path: '/v1/algorithms' }),
      ok: 200,
      other: { kind: 'status', status: 200 },
    },
    'POST /v1/jobs': {
      scope: 'jobs:write',
      call: async () => ({
        path: '/v1/jobs',
        headers: { 'Idempotency-Key': randomUUID() },
        body: { source: { type: 'file', path: file }, algorithms: ['sha256'] },
      }),
      ok: 202,
      other: createdOwn(202, '/v1/jobs'),
    },
    'GET /v1/jobs': {
      scope: 'jobs:read',
      call: async () => ({ path: '/v1/jobs?limit=100' }),
      ok: 200,
      other: {
        kind: 'own',
        check: async (res) => {
          expect(res.status).toBe(200);
          const ids = (res.body.items as { id: string }[]).map((item) => item.id);
          expect(ids).toContain(otherJob);
          const owners = await db.query(`SELECT DISTINCT tenant_id FROM jobs WHERE id = ANY($1)`, [
            ids,
          ]);
          expect(owners.rows).toEqual([{ tenant_id: OTHER }]);
        },
      },
    },
    'GET /v1/jobs/:id': {
      scope: 'jobs:read',
      call: async () => ({ path: `/v1/jobs/${await newJob()}` }),
      ok: 200,
      other: { kind: 'missing', missing: () => missingJob() },
    },
    'POST /v1/jobs/:id/cancel': {
      scope: 'jobs:write',
      call: async () => ({ path: `/v1/jobs/${await newJob()}/cancel` }),
      ok: 200,
      other: { kind: 'missing', missing: () => missingJob('/cancel') },
    },
    'POST /v1/batches': {
      scope: 'batches:write',
      call: async () => ({
        path: '/v1/batches',
        headers: { 'Idempotency-Key': randomUUID() },
        body: { source: { type: 'directory', path: env.fileRoot }, algorithms: ['sha256'] },
      }),
      ok: 202,
      other: createdOwn(202, '/v1/batches'),
    },
    'GET /v1/batches': {
      scope: 'batches:read',
      call: async () => ({ path: '/v1/batches?limit=100' }),
      ok: 200,
      other: listedOwn('batches'),
    },
    'GET /v1/batches/:id': {
      scope: 'batches:read',
      call: async () => ({ path: `/v1/batches/${await newBatch()}` }),
      ok: 200,
      other: { kind: 'missing', missing: () => missingBatch() },
    },
    'GET /v1/batches/:id/items': {
      scope: 'batches:read',
      call: async () => ({ path: `/v1/batches/${await newBatch()}/items` }),
      ok: 200,
      other: { kind: 'missing', missing: () => missingBatch('/items') },
    },
    'GET /v1/batches/:id/report': {
      scope: 'batches:read',
      call: async () => ({ path: `/v1/batches/${await newBatch()}/report` }),
      ok: 200,
      other: { kind: 'missing', missing: () => missingBatch('/report') },
    },
    'POST /v1/batches/:id/cancel': {
      scope: 'batches:write',
      call: async () => ({ path: `/v1/batches/${await newBatch()}/cancel` }),
      ok: 200,
      other: { kind: 'missing', missing: () => missingBatch('/cancel') },
    },
    'POST /v1/batches/:id/retry': {
      scope: 'batches:write',
      call: async () => ({ path: `/v1/batches/${await failedBatch()}/retry` }),
      ok: 202,
      other: { kind: 'missing', missing: () => missingBatch('/retry') },
    },
    'POST /v1/benchmarks': {
      scope: 'benchmarks:write',
      call: async () => ({ path: '/v1/benchmarks', body: { quick: true } }),
      ok: 202,
      other: createdOwn(202, '/v1/benchmarks'),
    },
    'GET /v1/benchmarks': {
      scope: 'benchmarks:read',
      call: async () => ({ path: '/v1/benchmarks' }),
      ok: 200,
      other: {
        kind: 'own',
        check: async (res) => {
          const mine = await db.query(`SELECT id FROM benchmark_runs WHERE tenant_id = 'default'`);
          const seen = (res.body.items as { id: string }[]).map((item) => item.id);
          expect(mine.rows.length).toBeGreaterThan(0);
          for (const row of mine.rows as { id: string }[]) expect(seen).not.toContain(row.id);
        },
      },
    },
    'GET /v1/benchmarks/:id': {
      scope: 'benchmarks:read',
      call: async () => ({ path: `/v1/benchmarks/${await newRun()}` }),
      ok: 200,
      other: { kind: 'missing', missing: () => ({ path: `/v1/benchmarks/${randomUUID()}` }) },
    },
    'GET /v1/benchmarks/:id/report': {
      scope: 'benchmarks:read',
      // a queued run: the owner learns it is not finished (409), anybody else that it does not exist
      call: async () => ({ path: `/v1/benchmarks/${await newRun()}/report` }),
      ok: 409,
      other: {
        kind: 'missing',
        missing: () => ({ path: `/v1/benchmarks/${randomUUID()}/report` }),
      },
    },
    'OPTIONS /v1/digest-sessions': {
      scope: 'jobs:read',
      call: async () => ({ path: '/v1/digest-sessions', headers: TUS }),
      ok: 204,
      other: { kind: 'status', status: 204 },
    },
    'OPTIONS /v1/digest-sessions/:id': {
      scope: 'jobs:read',
      call: async () => ({ path: await newSession(), headers: TUS }),
      ok: 204,
      other: { kind: 'status', status: 204 },
    },
    'POST /v1/digest-sessions': {
      scope: 'jobs:write',
      call: async () => ({
        path: '/v1/digest-sessions',
        headers: { ...TUS, 'Upload-Length': '3', 'Upload-Metadata': `algorithms ${b64('sha256')}` },
      }),
      ok: 201,
      other: {
        kind: 'own',
        check: async (res) => {
          expect(res.status).toBe(201);
          await http().get(res.headers.location).set(admin()).expect(404);
        },
      },
    },
    'HEAD /v1/digest-sessions/:id': {
      scope: 'jobs:write',
      call: async () => ({ path: await newSession(), headers: TUS }),
      ok: 200,
      other: {
        kind: 'missing',
        missing: () => ({ path: `/v1/digest-sessions/${randomUUID()}`, headers: TUS }),
      },
    },
    'GET /v1/digest-sessions/:id': {
      scope: 'jobs:read',
      call: async () => ({ path: await newSession() }),
      ok: 200,
      other: { kind: 'missing', missing: () => ({ path: `/v1/digest-sessions/${randomUUID()}` }) },
    },
    'PATCH /v1/digest-sessions/:id': {
      scope: 'jobs:write',
      call: async () => ({
        path: await newSession(),
        headers: {
          ...TUS,
          'Content-Type': 'application/offset+octet-stream',
          'Upload-Offset': '0',
        },
        body: Buffer.from('abc'),
      }),
      ok: 204,
      other: {
        kind: 'missing',
        missing: () => ({
          path: `/v1/digest-sessions/${randomUUID()}`,
          headers: {
            ...TUS,
            'Content-Type': 'application/offset+octet-stream',
            'Upload-Offset': '0',
          },
          body: Buffer.from('abc'),
        }),
      },
    },
    'DELETE /v1/digest-sessions/:id': {
      scope: 'jobs:write',
      call: async () => ({ path: await newSession(), headers: TUS }),
      ok: 204,
      other: {
        kind: 'missing',
        missing: () => ({ path: `/v1/digest-sessions/${randomUUID()}`, headers: TUS }),
      },
    },
    'POST /v1/keys': {
      scope: 'admin',
      call: async () => ({ path: '/v1/keys', body: { name: 'new', scopes: ['jobs:read'] } }),
      ok: 201,
      other: {
        kind: 'own',
        check: async (res) => {
          expect(res.status).toBe(201);
          expect(res.body.tenant).toBe(OTHER);
        },
      },
    },
    'GET /v1/keys': {
      scope: 'admin',
      call: async () => ({ path: '/v1/keys' }),
      ok: 200,
      other: {
        kind: 'own',
        check: async (res) => {
          expect(res.status).toBe(200);
          const tenants = new Set((res.body.items as { tenant: string }[]).map((k) => k.tenant));
          expect([...tenants]).toEqual([OTHER]);
        },
      },
    },
    'DELETE /v1/keys/:id': {
      scope: 'admin',
      call: async () => ({ path: `/v1/keys/${await newKey()}` }),
      ok: 200,
      other: {
        kind: 'missing',
        missing: () => ({ path: `/v1/keys/${randomBytes(8).toString('hex')}` }),
      },
    },
    'POST /v1/webhooks': {
      scope: 'admin',
      call: async () => ({
        path: '/v1/webhooks',
        body: { url: HOOK_URL, events: ['job.completed'] },
      }),
      ok: 201,
      other: createdOwn(201, '/v1/webhooks'),
    },
    'GET /v1/webhooks': {
      scope: 'admin',
      call: async () => ({ path: '/v1/webhooks' }),
      ok: 200,
      other: listedOwn('webhook_endpoints'),
    },
    'GET /v1/webhooks/:id': {
      scope: 'admin',
      call: async () => ({ path: `/v1/webhooks/${await newWebhook()}` }),
      ok: 200,
      other: { kind: 'missing', missing: () => missingWebhook() },
    },
    'GET /v1/webhooks/:id/deliveries': {
      scope: 'admin',
      call: async () => ({ path: `/v1/webhooks/${await newWebhook()}/deliveries` }),
      ok: 200,
      other: { kind: 'missing', missing: () => missingWebhook('/deliveries') },
    },
    'DELETE /v1/webhooks/:id': {
      scope: 'admin',
      call: async () => ({ path: `/v1/webhooks/${await newWebhook()}` }),
      ok: 204,
      other: { kind: 'missing', missing: () => missingWebhook() },
    },
    'POST /v1/tenants': {
      scope: 'admin',
      call: async () => ({
        path: '/v1/tenants',
        body: { id: `t-${randomBytes(4).toString('hex')}`, name: 'new tenant' },
      }),
      ok: 201,
      other: { kind: 'status', status: 403, code: 'SCOPE_MISSING' },
    },
    'GET /v1/tenants': {
      scope: 'admin',
      call: async () => ({ path: '/v1/tenants' }),
      ok: 200,
      other: { kind: 'status', status: 403, code: 'SCOPE_MISSING' },
    },
  };

  /** The key a case presents (undefined: no Authorization header). */
  const keyFor = (kase: Case, scope: Scope): Record<string, string> => {
    switch (kase) {
      case 'no key':
        return {};
      case 'malformed':
        return { Authorization: `Bearer hq_${'z'.repeat(16)}_short` };
      case 'unknown':
        return bearer(
          `hq_${randomBytes(8).toString('hex')}_${randomBytes(32).toString('base64url')}`,
        );
      case 'expired':
        return bearer(expired);
      case 'revoked':
        return bearer(revoked);
      case 'missing scope':
        return bearer(keys[`without ${scope}`]);
      case "other tenant's":
        return bearer(otherAdmin);
      case 'right key':
        return bearer(keys[scope]);
    }
  };

  let routes: RouteAccess[];
  let registered: string[];

  beforeAll(async () => {
    env = await createTestEnv({
      BENCHMARK_MAX_ACTIVE: '10000',
      BATCH_MAX_ACTIVE: '10000',
      WEBHOOK_POLL_MS: '3600000',
    });
    app = await createApiApp(env, { attachKey: false });
    db = new Client({ connectionString: env.databaseUrl });
    await db.connect();
    file = join(env.fileRoot, 'data.bin');
    await writeFile(file, 'hello');
    // a benchmark worker of this architecture reported: runs are admitted
    await db.query(`INSERT INTO benchmark_workers (arch, seen_at) VALUES ($1, now())`, [
      process.arch,
    ]);
    for (const scope of SCOPES) {
      keys[scope] = (await createTestKey(env, { scopes: [scope] })).key;
      const without = SCOPES.filter((s) => s !== scope && s !== 'admin');
      keys[`without ${scope}`] = (await createTestKey(env, { scopes: without })).key;
    }
    const old = await createTestKey(env, { scopes: ['admin'] });
    await db.query(`UPDATE api_keys SET expires_at = now() - interval '1 hour' WHERE id = $1`, [
      old.id,
    ]);
    expired = old.key;
    const gone = await createTestKey(env, { scopes: ['admin'] });
    await db.query(`UPDATE api_keys SET revoked_at = now() WHERE id = $1`, [gone.id]);
    revoked = gone.key;
    otherAdmin = (
      await createTestKey(env, {
        tenantId: OTHER,
        createTenant: true,
        scopes: ['admin'],
      })
    ).key;
    const job = await http()
      .post('/v1/jobs')
      .set(bearer(otherAdmin))
      .send({ source: { type: 'file', path: file }, algorithms: ['sha256'] })
      .expect(202);
    otherJob = job.body.id as string;
    await newRun(bearer(otherAdmin));
    await newJob();
    await newRun();

    routes = routeAccess(app);
    const router = (app.getHttpAdapter().getInstance() as { router: { stack: Layer[] } }).router;
    registered = router.stack
      .filter((layer) => layer.route && !String(layer.route.path).startsWith('/docs'))
      .flatMap((layer) =>
        Object.keys(layer.route!.methods).map(
          (m) => `${m.toUpperCase()} ${layer.route!.path.replace(/(.)\/$/, '$1')}`,
        ),
      );
    counts.routes = new Set(registered).size;
  });

  afterAll(async () => {
    await db?.end();
    await app?.close();
    await env?.cleanup();
  });

  it('knows every route of the router, and every route names its scope or is public', () => {
    const fromMetadata = routes.map((route) => `${route.method} ${route.path}`);
    // (Express may hold a route twice, with and without a trailing slash)
    expect(new Set(registered)).toEqual(new Set(fromMetadata));
    expect(new Set(registered)).toEqual(new Set(Object.keys(ROUTES)));
    expect(routes.filter((route) => route.implicit)).toEqual([]);
    for (const route of routes)
      expect(route.scope).toBe(ROUTES[`${route.method} ${route.path}`].scope);
  });

  const refusals: Record<string, string> = {};

  describe.each(Object.keys(ROUTES))('%s', (name) => {
    const [method] = name.split(' ');
    const route = () => ROUTES[name];

    it.each(CASES)('%s', async (kase) => {
      const { scope, ok, other } = route();
      const call = await route().call();
      if (scope === null) {
        // public: every caller gets the same answer, keys or not
        const res = await send(method, call, keyFor(kase, 'admin'));
        expect(res.status).toBe(ok);
        counts.checked = (counts.checked ?? 0) + 1;
        return;
      }
      const before = await snapshot();
      if (kase === 'right key') {
        const res = await send(method, call, keyFor(kase, scope));
        expect(res.status).toBe(ok);
        counts.checked = (counts.checked ?? 0) + 1;
        return;
      }
      if (kase === "other tenant's") {
        const res = await send(method, call, keyFor(kase, scope));
        if (other.kind === 'missing') {
          expect(res.status).toBe(404);
          const missing = other.missing();
          const control = await send(method, missing, keyFor(kase, scope));
          expect(control.status).toBe(404);
          const mineId = call.path.split('/')[3];
          const missingId = missing.path.split('/')[3];
          expect(answer(res.body).replaceAll(mineId, '<id>')).toBe(
            answer(control.body).replaceAll(missingId, '<id>'),
          );
          expect(await snapshot()).toEqual(before);
        } else if (other.kind === 'own') {
          await other.check(res);
        } else {
          expect(res.status).toBe(other.status);
          if (other.code) expect(res.body.error.code).toBe(other.code);
          expect(await snapshot()).toEqual(before);
        }
        counts.checked = (counts.checked ?? 0) + 1;
        return;
      }
      const res = await send(method, call, keyFor(kase, scope));
      if (kase === 'missing scope') {
        expect(res.status).toBe(403);
        if (method !== 'HEAD') {
          expect(res.body.error.code).toBe('SCOPE_MISSING');
          expect(res.body.error.details).toEqual({ required: scope });
        }
      } else {
        expect(res.status).toBe(401);
        expect(res.headers['www-authenticate']).toBe('Bearer realm="hashq"');
        // one answer for every kind of bad key: no oracle for which keys exist
        const body = answer(res.body);
        if (method !== 'HEAD') expect(res.body.error.code).toBe('UNAUTHORIZED');
        refusals[name] ??= body;
        expect(body).toBe(refusals[name]);
      }
      expect(await snapshot()).toEqual(before);
      counts.checked = (counts.checked ?? 0) + 1;
    });
  });

  it('checked every cell of the matrix', () => {
    // printed for the closing note
    console.log(
      `authorization matrix: ${counts.routes} routes × ${CASES.length} cases = ${counts.routes * CASES.length} cells, ${counts.checked} checked`,
    );
    expect(counts.checked).toBe(counts.routes * CASES.length);
  });

  it('/docs asks for an admin key off loopback (HASHQ_DOCS_ACCESS=key)', async () => {
    const none = await http().get('/docs/json').expect(401);
    expect(none.headers['www-authenticate']).toBe('Bearer realm="hashq"');
    expect(none.body.error.code).toBe('UNAUTHORIZED');
    const reader = await http().get('/docs/json').set(bearer(keys['jobs:read'])).expect(403);
    expect(reader.body.error.code).toBe('SCOPE_MISSING');
    const doc = await http().get('/docs/json').set(admin()).expect(200);
    expect(doc.body.components.securitySchemes.bearer).toMatchObject({
      type: 'http',
      scheme: 'bearer',
    });
    expect(doc.body.paths['/v1/jobs/{id}'].get['x-hashq-scope']).toBe('jobs:read');
    expect(doc.body.paths['/v1/jobs/{id}'].get.security).toEqual([{ bearer: [] }]);
    expect(doc.body.paths['/health'].get.security).toEqual([]);
  });
});

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
}
