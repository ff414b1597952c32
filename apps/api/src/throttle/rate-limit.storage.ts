import { HASHQ_CONFIG, HASHQ_LOGGER, type HashqConfig } from '@hashq/config';
import { createRedisClient, withTimeout } from '@hashq/jobs';
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { Counter } from 'prom-client';

import { MetricsService } from '../metrics/metrics.service';

/** Where a caller stands after one more request. */
export interface RateLimitRecord {
  /** Requests counted in the current window, this one included. */
  hits: number;
  /** Milliseconds until the window ends (and the count starts again from 0). */
  windowLeftMs: number;
}

/**
 * One round trip, atomic: a fixed-window counter that the window's first request creates with
 * the window's length as its expiry (refused requests count too: hammering does not reset it).
 * Returns { hits, ms left in the window }.
 */
const INCREMENT = `
local hits = redis.call('INCR', KEYS[1])
local leftMs = redis.call('PTTL', KEYS[1])
if leftMs < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  leftMs = tonumber(ARGV[1])
end
return { hits, leftMs }
`;

/** A rate-limit check delays a request by this much at most; then it is let through. */
const REDIS_TIMEOUT_MS = 500;
/** How long the start waits for Redis (then it goes on, failing open until Redis answers). */
const CONNECT_TIMEOUT_MS = 2000;
/** While Redis is away, one log line per this interval. */
const LOG_INTERVAL_MS = 10_000;

interface RateLimitRedis extends Redis {
  hashqRateLimit(key: string, windowMs: number): Promise<[number, number]>;
}

/**
 * The rate-limit counters, in Redis so that every API instance counts against the same limit.
 * One key per caller, under the deployment's prefix: `<QUEUE_PREFIX>:rate-limit:<tracker>`.
 *
 * Fails open: when Redis does not answer within REDIS_TIMEOUT_MS (down, restarting, slow),
 * increment() returns undefined and the request goes through uncounted; a warning is logged (at
 * most one per LOG_INTERVAL_MS) and hashq_api_rate_limit_unenforced_total counts it. Limits
 * protect the service; they must not take it down with Redis, which the API otherwise survives.
 */
@Injectable()
export class RateLimitStorage implements OnModuleInit, OnModuleDestroy {
  private readonly redis: RateLimitRedis;
  private readonly prefix: string;
  private readonly unenforced: Counter;
  private lastLogged = 0;

  constructor(
    @Inject(HASHQ_CONFIG) config: HashqConfig,
    @Inject(HASHQ_LOGGER) private readonly logger: Logger,
    metrics: MetricsService,
  ) {
    this.prefix = `${config.queuePrefix}:rate-limit`;
    // 'probe': no offline queue, no retries: a command fails at once while Redis is away.
    this.redis = createRedisClient(config.redisUrl, 'probe', this.prefix) as RateLimitRedis;
    this.redis.on('error', () => undefined); // reported by increment(), not as an unhandled event
    this.redis.defineCommand('hashqRateLimit', { numberOfKeys: 1, lua: INCREMENT });
    this.unenforced = new Counter({
      name: 'hashq_api_rate_limit_unenforced_total',
      help: 'Requests let through without a rate-limit check because Redis did not answer',
      registers: [metrics.registry],
    });
  }

  /** Connects before the app serves, so its first requests are counted; Redis being down does not stop the start. */
  async onModuleInit(): Promise<void> {
    await withTimeout(this.redis.connect(), CONNECT_TIMEOUT_MS, 'redis').catch(() => undefined);
  }

  onModuleDestroy(): void {
    this.redis.disconnect();
  }

  /** Counts one request of `tracker`; undefined when Redis did not answer (let it through). */
  async increment(tracker: string, windowMs: number): Promise<RateLimitRecord | undefined> {
    try {
      this.connect();
      const [hits, windowLeftMs] = await withTimeout(
        this.redis.hashqRateLimit(`${this.prefix}:${tracker}`, windowMs),
        REDIS_TIMEOUT_MS,
        'redis',
      );
      return { hits, windowLeftMs };
    } catch (err) {
      this.failOpen(err);
      return undefined;
    }
  }

  /** Connects on first use and after a disconnect; ioredis reconnects by itself in between. */
  private connect(): void {
    if (this.redis.status === 'wait' || this.redis.status === 'end') {
      this.redis.connect().catch(() => undefined);
    }
  }

  private failOpen(err: unknown): void {
    this.unenforced.inc();
    const now = Date.now();
    if (now - this.lastLogged < LOG_INTERVAL_MS) return;
    this.lastLogged = now;
    const message = err instanceof Error ? err.message : String(err);
    this.logger.warn({ err: { message } }, 'rate limits not enforced: Redis did not answer');
  }
}
