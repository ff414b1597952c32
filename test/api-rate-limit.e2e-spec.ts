/**
 * Rate limits across API instances: two API apps on one Redis, requests alternating between
 * them, count against one limit per key; another key, another client address and /health are not
 * affected; once the window has passed the key gets through again (polled, no clock assertion).
 * The principal is set by a stand-in for the authentication guard (an APP_GUARD reading test
 * headers, on an API with HASHQ_AUTH=off, where a request without a test key is the keyless local
 * caller counted by its address), so the limiter is shown to run after authentication. With Redis down the limiter fails open:
 * requests pass, a warning is logged, a metric counts them; with Redis back, limits hold again.
 */
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';

import { createLogger } from '@hashq/config';
import {
  type CanActivate,
  type ExecutionContext,
  type INestApplication,
  Injectable,
  Module,
} from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { Redis } from 'ioredis';
import request from 'supertest';

import { type Principal, SCOPES } from '../apps/api/src/auth/principal';
import { createApiApp } from './helpers/api';
import { createTestEnv, type TestEnv } from './helpers/env';
import { PrivateRedis } from './helpers/redis-server';

const LIMIT = 6;
const WINDOW_MS = 4000;
const GOLD_LIMIT = 10;

/** Stands in for the authentication guard: X-Test-Key / X-Test-Tenant become the principal. */
@Injectable()
class TestPrincipalGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context
      .switchToHttp()
      .getRequest<{ headers: Record<string, string>; principal?: Principal }>();
    const keyId = req.headers['x-test-key'];
    if (keyId) {
      req.principal = {
        tenantId: req.headers['x-test-tenant'] ?? 'default',
        keyId,
        scopes: SCOPES,
      };
    }
    return true;
  }
}

@Module({ providers: [{ provide: APP_GUARD, useClass: TestPrincipalGuard }] })
class TestAuthModule {}

/** Keeps every log line the app writes. */
class LogSink extends Writable {
  readonly lines: Record<string, unknown>[] = [];

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    for (const line of chunk.toString().split('\n')) if (line) this.lines.push(JSON.parse(line));
    done();
  }
}

const asKey = (key: string, tenant = 'default') => ({ 'X-Test-Key': key, 'X-Test-Tenant': tenant });

describe('rate limits across two API instances on one Redis (e2e)', () => {
  let env: TestEnv;
  let apps: INestApplication[] = [];
  const call = (instance: number, headers: Record<string, string> = {}) =>
    request(apps[instance % 2].getHttpServer())
      .get('/v1/algorithms')
      .set(headers);

  beforeAll(async () => {
    env = await createTestEnv({
      HASHQ_AUTH: 'off',
      HOST: '127.0.0.1',
      HASHQ_RATE_LIMIT: String(LIMIT),
      HASHQ_RATE_LIMIT_WINDOW_MS: String(WINDOW_MS),
      HASHQ_RATE_LIMIT_TENANTS: `gold:${GOLD_LIMIT},free:0`,
    });
    apps = [
      await createApiApp(env, { imports: [TestAuthModule], attachKey: false }),
      await createApiApp(env, { imports: [TestAuthModule], attachKey: false }),
    ];
  });

  afterAll(async () => {
    for (const app of apps) await app.close();
    await env?.cleanup();
  });

  /** Requests of `headers` alternating between the instances, until one is refused. */
  async function untilRefused(headers: Record<string, string>, max: number) {
    const passed: request.Response[] = [];
    for (let i = 0; i < max; i++) {
      const res = await call(i, headers);
      if (res.status === 429) return { passed, refused: res, instance: i % 2 };
      expect(res.status).toBe(200);
      passed.push(res);
    }
    throw new Error(`no 429 within ${max} requests`);
  }

  it('counts one key over both instances: the request after the limit is 429 with Retry-After', async () => {
    const { passed, refused } = await untilRefused(asKey('key-a'), 3 * LIMIT);
    expect(passed).toHaveLength(LIMIT);
    expect(passed.map((res) => Number(res.headers['x-ratelimit-remaining']))).toEqual(
      Array.from({ length: LIMIT }, (_, i) => LIMIT - 1 - i),
    );
    expect(passed.every((res) => res.headers['x-ratelimit-limit'] === String(LIMIT))).toBe(true);

    const retryAfter = refused.headers['retry-after'];
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(retryAfter)).toBeLessThanOrEqual(WINDOW_MS / 1000);
    expect(refused.body).toEqual({
      error: {
        code: 'RATE_LIMITED',
        message: expect.stringContaining(`more than ${LIMIT} requests`),
        details: { limit: LIMIT, windowMs: WINDOW_MS, retryAfterSeconds: Number(retryAfter) },
        requestId: refused.headers['x-request-id'],
      },
    });
    // the other instance refuses it too
    expect((await call(0, asKey('key-a'))).status).toBe(429);
    expect((await call(1, asKey('key-a'))).status).toBe(429);
  });

  it('another key and /health are not affected', async () => {
    expect((await call(1, asKey('key-b'))).status).toBe(200);
    const health = await request(apps[0].getHttpServer()).get('/health').set(asKey('key-a'));
    expect(health.status).toBe(200);
    expect(health.headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('lets the key through again once its window has passed', async () => {
    let res = await call(0, asKey('key-a'));
    for (let i = 0; res.status === 429 && i < 200; i++) {
      await sleep(100);
      res = await call(i, asKey('key-a'));
    }
    expect(res.status).toBe(200);
    expect(res.headers['x-ratelimit-remaining']).toBe(String(LIMIT - 1)); // a new window
  });

  it('counts requests without a key by client address, apart from every key', async () => {
    // the first request of this address in this file: it opens the window
    const { passed, refused } = await untilRefused({}, 3 * LIMIT);
    expect(passed).toHaveLength(LIMIT);
    expect(refused.body.error.code).toBe('RATE_LIMITED');
    expect((await call(0, asKey('key-c'))).status).toBe(200);
  });

  it('gives the keys of a tenant in HASHQ_RATE_LIMIT_TENANTS its limit (0: none)', async () => {
    const { passed, refused } = await untilRefused(asKey('key-gold', 'gold'), 3 * GOLD_LIMIT);
    expect(passed).toHaveLength(GOLD_LIMIT);
    expect(refused.body.error.details.limit).toBe(GOLD_LIMIT);
    for (let i = 0; i < 3 * LIMIT; i++) {
      const res = await call(i, asKey('key-free', 'free'));
      expect([i, res.status, res.headers['x-ratelimit-limit']]).toEqual([i, 200, undefined]);
    }
  });

  it("keeps one counter per caller under the deployment's prefix, expiring with the window", async () => {
    await call(0, asKey('key-d'));
    await call(1);
    const redis = new Redis(env.redisUrl);
    try {
      for (const tracker of ['key:key-d', 'ip:127.0.0.1']) {
        const key = `${env.queuePrefix}:rate-limit:${tracker}`;
        expect([key, Number(await redis.get(key))]).toEqual([key, expect.any(Number)]);
        const ttl = await redis.pttl(key);
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(WINDOW_MS);
      }
      expect(await redis.keys(`${env.queuePrefix}:rate-limit:*key-free*`)).toEqual([]);
    } finally {
      redis.disconnect();
    }
  });
});

describe('rate limits with Redis down: fail open (e2e)', () => {
  const redis = new PrivateRedis();
  const logs = new LogSink();
  let env: TestEnv;
  let app: INestApplication;
  const call = (key: string) => request(app.getHttpServer()).get('/v1/algorithms').set(asKey(key));

  beforeAll(async () => {
    await redis.start();
    env = await createTestEnv({
      REDIS_URL: redis.url,
      HASHQ_RATE_LIMIT: '3',
      HASHQ_RATE_LIMIT_WINDOW_MS: '60000',
    });
    const logger = createLogger('api', 'info', { isTTY: false, destination: logs });
    app = await createApiApp(env, { logger, imports: [TestAuthModule] });
  });

  afterAll(async () => {
    if (!redis.running) await redis.start().catch(() => undefined);
    await app?.close();
    await env?.cleanup();
    await redis.dispose();
  });

  const unenforced = async () => {
    const metrics = await request(app.getHttpServer()).get('/metrics').expect(200);
    return Number(/^hashq_api_rate_limit_unenforced_total (\d+)/m.exec(metrics.text)?.[1]);
  };

  it('limits while Redis is up, lets every request through while it is down, limits again after', async () => {
    for (let i = 0; i < 3; i++) expect((await call('before')).status).toBe(200);
    expect((await call('before')).status).toBe(429);
    const before = await unenforced();

    await redis.stop();
    for (let i = 0; i < 10; i++) {
      const res = await call('during');
      expect([i, res.status]).toEqual([i, 200]);
    }
    expect((await call('before')).status).toBe(200); // its count is out of reach too
    expect((await unenforced()) - before).toBeGreaterThanOrEqual(11);
    expect(
      logs.lines.filter((l) => l.msg === 'rate limits not enforced: Redis did not answer'),
    ).not.toHaveLength(0);

    await redis.start(); // empty: the counts start again
    let refused = false;
    for (let i = 0; i < 200 && !refused; i++) {
      refused = (await call('after')).status === 429;
      if (!refused) await sleep(50);
    }
    expect(refused).toBe(true);
  }, 60_000);
});
