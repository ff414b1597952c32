import type { RedisOptions } from 'bullmq';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

/**
 * What a connection to REDIS_URL is for, which decides how it behaves while Redis is away:
 * - 'consumer': BullMQ workers and the queues of their process; commands wait for Redis to come
 *   back (maxRetriesPerRequest: null, which BullMQ requires of a worker's connections).
 * - 'producer': the API's queues; a command fails after ioredis' retries, and every call is
 *   bounded by withTimeout besides, so a request never hangs on Redis.
 * - 'probe': the health check's PING; connects on demand, never queues a command, fails at once.
 */
export type RedisRole = 'consumer' | 'producer' | 'probe';

/** Options of every hashq connection to Redis: the URL (ioredis parses it) and the role's policy. */
export function redisOptions(redisUrl: string, role: RedisRole): RedisOptions & { url: string } {
  switch (role) {
    case 'consumer':
      return { url: redisUrl, maxRetriesPerRequest: null };
    case 'producer':
      return { url: redisUrl };
    case 'probe':
      return {
        url: redisUrl,
        lazyConnect: true,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
      };
  }
}

/** A client of its own (not one of BullMQ's), e.g. the health check's; `name` shows in CLIENT LIST. */
export function createRedisClient(redisUrl: string, role: RedisRole, name: string): Redis {
  const { url, ...options } = redisOptions(redisUrl, role);
  return new Redis(url, { ...options, connectionName: name });
}

/** Something that emits Redis 'error' events: a BullMQ Queue or Worker, an ioredis client. */
interface ErrorEmitter {
  on(event: 'error', listener: (err: Error) => void): unknown;
}

/**
 * Logs the Redis errors of the emitters it watches, at most one line per `intervalMs` for all of
 * them together while Redis is away. Without a listener BullMQ prints every error to the console.
 */
export class RedisErrorLogger {
  private lastLogged = 0;

  constructor(
    private readonly logger: Logger,
    private readonly intervalMs = 10_000,
  ) {}

  watch(emitter: ErrorEmitter, fields: Record<string, unknown> = {}): void {
    emitter.on('error', (err: Error) => {
      const now = Date.now();
      if (now - this.lastLogged < this.intervalMs) return;
      this.lastLogged = now;
      const code = (err as NodeJS.ErrnoException).code;
      this.logger.warn({ ...fields, err: { message: err.message, code } }, 'redis unavailable');
    });
  }
}
