/**
 * Webhooks (README "Webhooks"): endpoints of a tenant receive `session.completed`, `job.completed`
 * and `batch.completed`, signed as Standard Webhooks specifies. The oracle for the signature is
 * the `standardwebhooks` npm package (the spec authors' own library); digests are checked against
 * Node's crypto. The receivers are node:http servers on loopback; HASHQ_ALLOW_HOSTS lets the API
 * reach 127.0.0.1 and nothing else that is not global unicast.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { NetGuard } from '@hashq/sources';
import type { INestApplication } from '@nestjs/common';
import { Client } from 'pg';
import { Webhook } from 'standardwebhooks';
import request from 'supertest';

import { DigestSessionCleanup } from '../apps/api/src/digest-sessions/digest-session-cleanup.service';
import { DELIVERY_RETENTION_DAYS } from '../apps/api/src/webhooks/webhook-deliverer.service';
import { postWebhook } from '../apps/api/src/webhooks/webhook-sender';
import { WebhooksRepository } from '../apps/api/src/webhooks/webhooks.repository';
import { createApiApp } from './helpers/api';
import { createTestEnv, createTestKey, type TestEnv } from './helpers/env';
import { samples } from './helpers/metrics';
import { TUS } from './helpers/tus';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A webhook receiver: records every request and answers the next of `statuses` (then the last),
 * once `hold`'s release is called if it was.
 */
class Receiver {
  readonly received: Received[] = [];
  private server?: Server;
  private held: Promise<void> = Promise.resolve();
  constructor(private statuses: number[] = [204]) {}

  /** Answers nothing until the returned function is called. */
  hold(): () => void {
    let release!: () => void;
    this.held = new Promise<void>((resolve) => (release = resolve));
    return release;
  }

  async listen(port = 0): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        this.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        const status =
          this.statuses.length > 1 ? (this.statuses.shift() as number) : this.statuses[0];
        void this.held.then(() => {
          res.statusCode = status;
          res.end();
        });
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}/hooks`;
  }

  answer(statuses: number[]): void {
    this.statuses = statuses;
  }

  async until(count: number, timeoutMs = 15_000): Promise<Received[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.received.length < count) {
      if (Date.now() > deadline) {
        throw new Error(
          `receiver got ${this.received.length} of ${count} requests in ${timeoutMs} ms`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return this.received;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) =>
      this.server ? this.server.close(() => resolve()) : resolve(),
    );
  }
}

/** A session.completed message's body. */
interface SessionEvent {
  type: string;
  timestamp: string;
  data: {
    id: string;
    status: string;
    offset: number;
    digests: Record<string, { hex: string; base64: string }>;
  };
}

const b64 = (text: string) => Buffer.from(text).toString('base64');
const webhookHeaders = (headers: IncomingHttpHeaders) => ({
  'webhook-id': String(headers['webhook-id']),
  'webhook-timestamp': String(headers['webhook-timestamp']),
  'webhook-signature': String(headers['webhook-signature']),
});
/** A session event verified by the standardwebhooks library under `secret`; throws if forged. */
const verifiedSession = (secret: string, message: Received) =>
  new Webhook(secret).verify(message.body, webhookHeaders(message.headers)) as SessionEvent;

describe('webhooks', () => {
  let env: TestEnv;
  let app: INestApplication;
  let db: Client;
  const receivers: Receiver[] = [];
  const http = () => request(app.getHttpServer());

  const receiver = async (statuses?: number[]) => {
    const r = new Receiver(statuses);
    receivers.push(r);
    return { r, url: await r.listen() };
  };
  const endpoint = async (url: string, events: string[], auth?: Record<string, string>) =>
    (
      await http()
        .post('/v1/webhooks')
        .set(auth ?? {})
        .send({ url, events })
        .expect(201)
    ).body as { id: string; secret: string; url: string; events: string[] };

  /** A session of `body`, uploaded whole in one PATCH; its id. */
  const completeSession = async (
    body: Buffer,
    algorithms: string[],
    auth?: Record<string, string>,
  ) => {
    const created = await http()
      .post('/v1/digest-sessions')
      .set(TUS)
      .set(auth ?? {})
      .set({
        'Upload-Length': String(body.length),
        'Upload-Metadata': `algorithms ${b64(algorithms.join(','))}`,
      })
      .expect(201);
    const location = created.headers.location as string;
    await http()
      .patch(location)
      .set(TUS)
      .set(auth ?? {})
      .set({ 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' })
      .send(body)
      .expect(204);
    return location.split('/').pop() as string;
  };

  const deliveries = async (id: string) =>
    (await http().get(`/v1/webhooks/${id}/deliveries`).expect(200)).body.items as Array<{
      status: string;
      attempts: number;
      lastStatus: number | null;
      lastError: string | null;
      resourceId: string;
      type: string;
    }>;

  const eventually = async <T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const value = await read();
      if (done(value) || Date.now() > deadline) return value;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  /** The endpoint's newest delivery once it has `status` (or as it is after 15 s). */
  const newest = async (id: string, status: string) =>
    (
      await eventually(
        () => deliveries(id),
        (items) => items[0]?.status === status,
      )
    )[0];

  beforeAll(async () => {
    env = await createTestEnv({
      HASHQ_ALLOW_HOSTS: '127.0.0.1',
      WEBHOOK_POLL_MS: '50',
      WEBHOOK_RETRY_SECONDS: '1,1',
    });
    app = await createApiApp(env);
    db = new Client({ connectionString: env.databaseUrl });
    await db.connect();
  });
  afterEach(async () => {
    for (const r of receivers.splice(0)) await r.close();
    await db.query(`DELETE FROM webhook_endpoints`);
  });
  afterAll(async () => {
    await db?.end();
    await app?.close();
    await env?.cleanup();
  });

  it('session.completed: signed as Standard Webhooks, verified by the standardwebhooks library, digests as Node computes them', async () => {
    const { r, url } = await receiver();
    const hook = await endpoint(url, ['session.completed']);
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(hook).toMatchObject({ url, events: ['session.completed'] });

    const body = randomBytes(3000);
    const id = await completeSession(body, ['sha256', 'sha512']);
    const [message] = await r.until(1);

    const payload = verifiedSession(hook.secret, message);
    expect(payload.type).toBe('session.completed');
    expect(Number.isNaN(Date.parse(payload.timestamp))).toBe(false);
    expect(payload.data).toMatchObject({ id, status: 'succeeded', offset: body.length });
    for (const algorithm of ['sha256', 'sha512']) {
      const digest = createHash(algorithm).update(body).digest();
      expect(payload.data.digests[algorithm]).toMatchObject({
        hex: digest.toString('hex'),
        base64: digest.toString('base64'),
      });
    }
    expect(message.headers['content-type']).toBe('application/json');
    // the same message under another secret, or altered by one byte, does not verify
    expect(() =>
      new Webhook(`whsec_${randomBytes(32).toString('base64')}`).verify(
        message.body,
        webhookHeaders(message.headers),
      ),
    ).toThrow();
    const altered = message.body.replace(payload.data.digests.sha256.hex, '0'.repeat(64));
    expect(() =>
      new Webhook(hook.secret).verify(altered, webhookHeaders(message.headers)),
    ).toThrow();

    const delivery = await newest(hook.id, 'delivered');
    expect(delivery).toMatchObject({
      type: 'session.completed',
      resourceId: id,
      status: 'delivered',
      attempts: 1,
      lastStatus: 204,
    });
    // the secret is stored sealed, never in the clear, and never shown again
    const stored = await db.query(`SELECT secret FROM webhook_endpoints WHERE id = $1`, [hook.id]);
    expect(
      (stored.rows[0].secret as Buffer).includes(Buffer.from(hook.secret.slice(6), 'base64')),
    ).toBe(false);
    expect((stored.rows[0].secret as Buffer).includes(Buffer.from(hook.secret))).toBe(false);
    expect((await http().get(`/v1/webhooks/${hook.id}`).expect(200)).body.secret).toBeUndefined();
  });

  it('job.completed and batch.completed reach only the endpoints that asked for them', async () => {
    const jobs = await receiver();
    const batches = await receiver();
    const jobHook = await endpoint(jobs.url, ['job.completed']);
    const batchHook = await endpoint(batches.url, ['batch.completed']);
    const { writeFile } = await import('node:fs/promises');
    await writeFile(`${env.fileRoot}/a.bin`, randomBytes(100));

    // canceled while queued (no worker runs here): the job and the batch end at once
    const job = await http()
      .post('/v1/jobs')
      .send({ source: { type: 'file', path: `${env.fileRoot}/a.bin` }, algorithms: ['sha256'] })
      .expect(202);
    await http().post(`/v1/jobs/${job.body.id}/cancel`).expect(200);
    const batch = await http()
      .post('/v1/batches')
      .send({ source: { type: 'directory', path: env.fileRoot }, algorithms: ['sha256'] })
      .expect(202);
    await http().post(`/v1/batches/${batch.body.id}/cancel`).expect(200);

    const [jobMessage] = await jobs.r.until(1);
    const [batchMessage] = await batches.r.until(1);
    const jobEvent = new Webhook(jobHook.secret).verify(
      jobMessage.body,
      webhookHeaders(jobMessage.headers),
    ) as {
      type: string;
      data: { id: string; status: string };
    };
    const batchEvent = new Webhook(batchHook.secret).verify(
      batchMessage.body,
      webhookHeaders(batchMessage.headers),
    ) as {
      type: string;
      data: { id: string; status: string };
    };
    expect(jobEvent).toMatchObject({
      type: 'job.completed',
      data: { id: job.body.id, status: 'canceled' },
    });
    expect(batchEvent).toMatchObject({
      type: 'batch.completed',
      data: { id: batch.body.id, status: 'canceled' },
    });
    // a session ending meanwhile went to neither
    await completeSession(Buffer.from('abc'), ['sha256']);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(jobs.r.received).toHaveLength(1);
    expect(batches.r.received).toHaveLength(1);
  });

  it('retries a refused delivery with the same id and body, each attempt signed, and gives up after the last', async () => {
    const flaky = await receiver([500, 200]);
    const flakyHook = await endpoint(flaky.url, ['session.completed']);
    const down = await receiver([503]);
    const downHook = await endpoint(down.url, ['session.completed']);
    await completeSession(randomBytes(10), ['sha256']);

    const [first, second] = await flaky.r.until(2);
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(second.body).toBe(first.body);
    for (const message of [first, second]) {
      expect(() =>
        new Webhook(flakyHook.secret).verify(message.body, webhookHeaders(message.headers)),
      ).not.toThrow();
    }
    const delivered = await newest(flakyHook.id, 'delivered');
    expect(delivered).toMatchObject({
      status: 'delivered',
      attempts: 2,
      lastStatus: 200,
      lastError: null,
    });

    // WEBHOOK_RETRY_SECONDS=1,1: three attempts, then failed
    await down.r.until(3);
    const failed = await newest(downHook.id, 'failed');
    expect(failed).toMatchObject({
      status: 'failed',
      attempts: 3,
      lastStatus: 503,
      lastError: 'HTTP 503',
    });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(down.r.received).toHaveLength(3);
  });

  it('a slow receiver holds only its own delivery; /metrics counts deliveries by status and the oldest pending', async () => {
    const metrics = async () => samples((await http().get('/metrics').expect(200)).text);
    const slow = await receiver([200]);
    const release = slow.r.hold();
    const slowHook = await endpoint(slow.url, ['session.completed']);
    const down = await receiver([503]);
    const downHook = await endpoint(down.url, ['session.completed']);
    await completeSession(randomBytes(10), ['sha256']);

    // the slow receiver has the request and does not answer; meanwhile the other delivery is
    // tried three times (WEBHOOK_RETRY_SECONDS=1,1) and fails for good
    await slow.r.until(1);
    await down.r.until(3);
    expect(await newest(downHook.id, 'failed')).toMatchObject({ status: 'failed', attempts: 3 });
    let m = await metrics();
    expect(m.get('hashq_webhook_deliveries{status="pending"}')).toBe(1);
    expect(m.get('hashq_webhook_deliveries{status="failed"}')).toBe(1);
    expect(m.get('hashq_webhook_deliveries{status="delivered"}')).toBe(0);
    // queued with the other, before its two retries a second apart
    expect(m.get('hashq_webhook_oldest_pending_seconds')).toBeGreaterThan(1.5);

    release();
    expect(await newest(slowHook.id, 'delivered')).toMatchObject({ attempts: 1, lastStatus: 200 });
    m = await metrics();
    expect(m.get('hashq_webhook_deliveries{status="pending"}')).toBe(0);
    expect(m.get('hashq_webhook_deliveries{status="delivered"}')).toBe(1);
    expect(m.get('hashq_webhook_deliveries{status="failed"}')).toBe(1);
    expect(m.get('hashq_webhook_oldest_pending_seconds')).toBe(0);
  });

  /** From now on, an instance whose first delivery round would come in 10 minutes. */
  const withoutDeliveries = async () => {
    await app.close();
    app = await createApiApp({ ...env, env: { ...env.env, WEBHOOK_POLL_MS: '600000' } });
  };

  /**
   * The session's session.completed, still pending, is delivered once an instance that delivers
   * runs: signed, the session as it succeeded, its digests as Node computes them.
   */
  const deliveredLater = async (
    hook: { id: string; secret: string },
    r: Receiver,
    session: { id: string; body: Buffer; algorithms: string[] },
  ) => {
    expect((await deliveries(hook.id))[0]).toMatchObject({ status: 'pending', attempts: 0 });
    await app.close();
    app = await createApiApp(env);
    const [message] = await r.until(1);
    const payload = verifiedSession(hook.secret, message);
    expect(payload).toMatchObject({
      type: 'session.completed',
      data: { id: session.id, status: 'succeeded' },
    });
    for (const algorithm of session.algorithms)
      expect(payload.data.digests[algorithm].hex).toBe(
        createHash(algorithm).update(session.body).digest('hex'),
      );
    expect(await newest(hook.id, 'delivered')).toMatchObject({ attempts: 1, lastStatus: 204 });
  };

  it('a session deleted before its session.completed was first sent is still delivered, digests and all', async () => {
    const { r, url } = await receiver();
    const hook = await endpoint(url, ['session.completed']);
    await withoutDeliveries(); // the DELETE comes first
    const body = randomBytes(2000);
    const id = await completeSession(body, ['sha256']);
    await http().delete(`/v1/digest-sessions/${id}`).set(TUS).expect(204);
    await http().get(`/v1/digest-sessions/${id}`).set(TUS).expect(404);
    await deliveredLater(hook, r, { id, body, algorithms: ['sha256'] });
  });

  it('a session that expires, and is then deleted, before its session.completed was first sent is still delivered, digests and all', async () => {
    const { r, url } = await receiver();
    const hook = await endpoint(url, ['session.completed']);
    await withoutDeliveries(); // the expiry and the cleanup come first
    const body = randomBytes(3000);
    const algorithms = ['sha256', 'sha512'];
    const id = await completeSession(body, algorithms);
    const idle = (ago: string) =>
      db.query(`UPDATE digest_sessions SET expires_at = now() - $2::interval WHERE id = $1`, [
        id,
        ago,
      ]);
    await idle('1 second');
    await app.get(DigestSessionCleanup).sweep();
    await http().get(`/v1/digest-sessions/${id}`).set(TUS).expect(410);
    await idle('2 days'); // past the time an expired session is kept
    await app.get(DigestSessionCleanup).sweep();
    await http().get(`/v1/digest-sessions/${id}`).set(TUS).expect(404);
    await deliveredLater(hook, r, { id, body, algorithms });
  });

  it('a delivery that finds the receiver down is delivered by another API instance once it is up', async () => {
    const r = new Receiver();
    receivers.push(r);
    const url = await r.listen();
    const port = Number(new URL(url).port);
    await r.close(); // nothing listens: the first attempt is refused
    const hook = await endpoint(url, ['session.completed']);
    const id = await completeSession(randomBytes(10), ['sha256']);
    const [refused] = await eventually(
      () => deliveries(hook.id),
      (items) => (items[0]?.lastError ?? null) !== null, // attempts count at the claim, before the send
    );
    expect(refused.lastError).toMatch(/ECONNREFUSED/);

    await app.close(); // this instance stops; a second one takes over
    app = await createApiApp(env);
    const back = new Receiver();
    receivers.push(back);
    await back.listen(port);
    const [message] = await back.until(1);
    expect(verifiedSession(hook.secret, message).data.id).toBe(id);
  });

  it("keeps tenants apart: another tenant's endpoints are not found, and its events never reach mine", async () => {
    const mine = await receiver();
    const theirs = await receiver();
    const myHook = await endpoint(mine.url, ['session.completed']);
    const other = await createTestKey(env, {
      tenantId: 'hooks-other',
      scopes: ['admin'],
      createTenant: true,
    });
    const otherAuth = { Authorization: `Bearer ${other.key}` };
    const theirHook = await endpoint(theirs.url, ['session.completed'], otherAuth);

    const listed = await http().get('/v1/webhooks').set(otherAuth).expect(200);
    expect(listed.body.items.map((item: { id: string }) => item.id)).toEqual([theirHook.id]);
    for (const path of [`/v1/webhooks/${myHook.id}`, `/v1/webhooks/${myHook.id}/deliveries`]) {
      const res = await http().get(path).set(otherAuth).expect(404);
      expect(res.body.error.code).toBe('WEBHOOK_NOT_FOUND');
    }
    await http().delete(`/v1/webhooks/${myHook.id}`).set(otherAuth).expect(404);
    await http().get(`/v1/webhooks/${myHook.id}`).expect(200);

    await completeSession(Buffer.from('theirs'), ['sha256'], otherAuth);
    await theirs.r.until(1);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(mine.r.received).toHaveLength(0);
    // a key without the admin scope manages no endpoint
    const reader = await createTestKey(env, { scopes: ['jobs:read', 'jobs:write'] });
    const refused = await http()
      .post('/v1/webhooks')
      .set({ Authorization: `Bearer ${reader.key}` })
      .send({ url: mine.url, events: ['session.completed'] })
      .expect(403);
    expect(refused.body.error.code).toBe('SCOPE_MISSING');
  });

  it('refuses URLs the SSRF guard refuses, and other bad input, with typed errors and nothing stored', async () => {
    const cases: Array<[unknown, number, string]> = [
      [
        { url: 'http://127.0.0.2:8080/', events: ['job.completed'] },
        403,
        'SOURCE_ADDRESS_FORBIDDEN',
      ],
      [
        { url: 'http://169.254.169.254/latest', events: ['job.completed'] },
        403,
        'SOURCE_ADDRESS_FORBIDDEN',
      ],
      [{ url: 'http://[::1]:8080/', events: ['job.completed'] }, 403, 'SOURCE_ADDRESS_FORBIDDEN'],
      [
        { url: 'http://[::ffff:10.0.0.1]/', events: ['job.completed'] },
        403,
        'SOURCE_ADDRESS_FORBIDDEN',
      ],
      [{ url: 'ftp://127.0.0.1/', events: ['job.completed'] }, 400, 'INVALID_WEBHOOK_URL'],
      [{ url: 'http://user:pw@127.0.0.1/', events: ['job.completed'] }, 400, 'INVALID_WEBHOOK_URL'],
      [{ url: 'not a url', events: ['job.completed'] }, 400, 'INVALID_WEBHOOK_URL'],
      [{ url: 'http://127.0.0.1/', events: ['job.started'] }, 400, 'VALIDATION_FAILED'],
      [{ url: 'http://127.0.0.1/', events: [] }, 400, 'VALIDATION_FAILED'],
      [{ url: 'http://127.0.0.1/' }, 400, 'VALIDATION_FAILED'],
    ];
    for (const [body, status, code] of cases) {
      const res = await http()
        .post('/v1/webhooks')
        .send(body as object);
      expect([JSON.stringify(body), res.status, res.body.error?.code]).toEqual([
        JSON.stringify(body),
        status,
        code,
      ]);
    }
    // a tenant's allowed_hosts narrow the URLs its endpoints may name, as they do its sources
    const narrow = await createTestKey(env, {
      tenantId: 'hooks-narrow',
      scopes: ['admin'],
      createTenant: true,
    });
    await db.query(
      `UPDATE tenants SET allowed_hosts = '{hooks.example.org}' WHERE id = 'hooks-narrow'`,
    );
    const narrowAuth = { Authorization: `Bearer ${narrow.key}` };
    const outside = await http()
      .post('/v1/webhooks')
      .set(narrowAuth)
      .send({ url: 'http://127.0.0.1:9/', events: ['job.completed'] })
      .expect(403);
    expect(outside.body.error).toMatchObject({
      code: 'SOURCE_NOT_ALLOWED',
      details: { tenant: 'hooks-narrow', host: '127.0.0.1' },
    });
    await http()
      .post('/v1/webhooks')
      .set(narrowAuth)
      .send({ url: 'https://hooks.example.org/hashq', events: ['job.completed'] })
      .expect(201);
    await db.query(`DELETE FROM webhook_endpoints`);
    const bad = await http().get('/v1/webhooks/not-a-uuid').expect(404);
    expect(bad.body.error.code).toBe('WEBHOOK_NOT_FOUND');
    expect((await db.query(`SELECT count(*)::int AS n FROM webhook_endpoints`)).rows[0].n).toBe(0);
  });

  it('checks the address connected to at delivery: a name that resolves to loopback is refused without HASHQ_ALLOW_HOSTS', async () => {
    const { r, url } = await receiver();
    const byName = url.replace('127.0.0.1', 'localhost');
    const outcome = await postWebhook(byName, {}, '{}', {
      guard: new NetGuard([]),
      timeoutMs: 2000,
    });
    expect(outcome).toMatchObject({ ok: false, httpStatus: null });
    expect(outcome.error).toMatch(/^SOURCE_ADDRESS_FORBIDDEN/);
    const allowed = await postWebhook(url, {}, '{}', {
      guard: new NetGuard(['127.0.0.1']),
      timeoutMs: 2000,
    });
    expect(allowed).toEqual({ ok: true, httpStatus: 204, error: null });
    expect(r.received).toHaveLength(1); // only the allowed one arrived
  });

  it('deletes ended deliveries a week old, never pending ones', async () => {
    const { r, url } = await receiver([503]);
    const hook = await endpoint(url, ['session.completed']);
    await completeSession(Buffer.from('a'), ['sha256']); // refused: stays pending
    await r.until(1);
    await completeSession(Buffer.from('b'), ['sha256']);
    await r.until(2);
    await db.query(`UPDATE webhook_deliveries SET created_at = now() - interval '8 days'`);
    const [kept] = (
      await db.query(`SELECT id FROM webhook_deliveries ORDER BY next_attempt_at LIMIT 1`)
    ).rows as { id: string }[];
    await db.query(`UPDATE webhook_deliveries SET status = 'failed' WHERE id <> $1`, [kept.id]);
    expect(await app.get(WebhooksRepository).prune(DELIVERY_RETENTION_DAYS, 1000)).toBe(1);
    expect((await deliveries(hook.id)).map((d) => d.status)).toEqual(['pending']);
  });

  it('caps the endpoints of a tenant, also when they are created at once', async () => {
    const { url } = await receiver();
    const answers = await Promise.all(
      Array.from({ length: 24 }, () =>
        http()
          .post('/v1/webhooks')
          .send({ url, events: ['job.completed'] }),
      ),
    );
    expect(answers.filter((res) => res.status === 201)).toHaveLength(16);
    for (const res of answers.filter((r) => r.status !== 201)) {
      expect(res.status).toBe(429);
      expect(res.body.error).toMatchObject({
        code: 'WEBHOOK_LIMIT_REACHED',
        details: { limit: 16 },
      });
    }
    expect((await db.query(`SELECT count(*)::int AS n FROM webhook_endpoints`)).rows[0].n).toBe(16);
  });
});
