import { HASHQ_CONFIG, type HashqConfig } from '@hashq/config';
import { createRedisClient, withTimeout } from '@hashq/jobs';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Redis } from 'ioredis';
import { DataSource } from 'typeorm';

export interface DependencyHealth {
  status: 'up' | 'down';
  latencyMs: number;
  error?: string;
}

export interface HealthReport {
  status: 'ok' | 'error';
  checks: { postgres: DependencyHealth; redis: DependencyHealth };
}

const CHECK_TIMEOUT_MS = 2000;

/**
 * Asks PostgreSQL (select 1) and Redis (PING) for real, in parallel. Redis is pinged on a small
 * connection of its own that fails fast instead of queueing commands while Redis is away.
 */
@Injectable()
export class HealthService implements OnModuleDestroy {
  private readonly redis: Redis;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(HASHQ_CONFIG) config: HashqConfig,
  ) {
    this.redis = createRedisClient(config.redisUrl, 'probe', `${config.queuePrefix}:health`);
    this.redis.on('error', () => undefined); // reported by check(), not as an unhandled event
  }

  async onModuleDestroy(): Promise<void> {
    this.redis.disconnect();
  }

  async check(): Promise<HealthReport> {
    const [postgres, redis] = await Promise.all([
      this.probe('postgres', async () => {
        await this.dataSource.query('select 1');
      }),
      this.probe('redis', async () => {
        if (this.redis.status === 'wait' || this.redis.status === 'end') await this.redis.connect();
        const reply = await this.redis.ping();
        if (reply !== 'PONG') throw new Error(`unexpected PING reply ${String(reply)}`);
      }),
    ]);
    return {
      status: postgres.status === 'up' && redis.status === 'up' ? 'ok' : 'error',
      checks: { postgres, redis },
    };
  }

  private async probe(name: string, run: () => Promise<void>): Promise<DependencyHealth> {
    const started = performance.now();
    const latency = () => Math.round((performance.now() - started) * 10) / 10;
    try {
      await withTimeout(run(), CHECK_TIMEOUT_MS, name);
      return { status: 'up', latencyMs: latency() };
    } catch (err) {
      return {
        status: 'down',
        latencyMs: latency(),
        error: err instanceof Error ? err.message : String(err),
      };
    }
  }
}
