import { HASHQ_CONFIG, type HashqConfig } from '@hashq/config';
import {
  type CanActivate,
  type ExecutionContext,
  HttpStatus,
  Inject,
  Injectable,
  SetMetadata,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { Counter } from 'prom-client';

import { principalOf, type RequestWithPrincipal } from '../auth/principal';
import { ApiError } from '../common/api-error';
import { MetricsService } from '../metrics/metrics.service';
import { clientAddress } from './client-address';
import { RateLimitStorage } from './rate-limit.storage';

const SKIP_RATE_LIMIT = 'hashq:skip-rate-limit';

/** A route (or every route of a controller) that is never rate limited: /health. */
export const SkipRateLimit = () => SetMetadata(SKIP_RATE_LIMIT, true);

/**
 * Per-caller rate limits over all routes together: a caller is an API key (the principal's
 * keyId), or a client address for requests without a key. Its limit is its tenant's
 * (HASHQ_RATE_LIMIT_TENANTS), else HASHQ_RATE_LIMIT, per HASHQ_RATE_LIMIT_WINDOW_MS; 0 = none.
 * Windows are fixed: the first request of a caller opens one. Over the limit: 429 RATE_LIMITED
 * with Retry-After, the seconds until the window ends. Every answer let through carries
 * X-RateLimit-Limit, -Remaining and -Reset (seconds until the window ends).
 *
 * Mounted by configureApp with useGlobalGuards, so it runs after the APP_GUARDs: authentication
 * has set the principal it counts by.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  private readonly limited: Counter;

  constructor(
    @Inject(HASHQ_CONFIG) private readonly config: HashqConfig,
    private readonly storage: RateLimitStorage,
    private readonly reflector: Reflector,
    metrics: MetricsService,
  ) {
    this.limited = new Counter({
      name: 'hashq_api_rate_limited_total',
      help: 'Requests refused with 429 RATE_LIMITED',
      registers: [metrics.registry],
    });
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const skip = this.reflector.getAllAndOverride<boolean>(SKIP_RATE_LIMIT, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (skip) return true;
    const http = context.switchToHttp();
    const req = http.getRequest<Request & RequestWithPrincipal>();
    const { tenantId, keyId } = principalOf(req);
    const { windowMs, tenantLimits } = this.config.rateLimit;
    const limit = tenantLimits.get(tenantId) ?? this.config.rateLimit.limit;
    if (limit === 0) return true;

    const tracker =
      keyId === null ? `ip:${clientAddress(req.socket.remoteAddress)}` : `key:${keyId}`;
    const record = await this.storage.increment(tracker, windowMs);
    if (record === undefined) return true; // Redis did not answer: fail open (logged, counted)

    const res = http.getResponse<Response>();
    const resetSeconds = Math.max(1, Math.ceil(record.windowLeftMs / 1000));
    if (record.hits > limit) {
      res.setHeader('Retry-After', String(resetSeconds));
      this.limited.inc();
      throw new ApiError(
        HttpStatus.TOO_MANY_REQUESTS,
        'RATE_LIMITED',
        `more than ${limit} requests in ${windowMs} ms; retry in ${resetSeconds} s`,
        { limit, windowMs, retryAfterSeconds: resetSeconds },
      );
    }
    res.setHeader('X-RateLimit-Limit', String(limit));
    res.setHeader('X-RateLimit-Remaining', String(Math.max(0, limit - record.hits)));
    res.setHeader('X-RateLimit-Reset', String(resetSeconds));
    return true;
  }
}
