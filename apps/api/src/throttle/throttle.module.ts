import { Module } from '@nestjs/common';

import { MetricsModule } from '../metrics/metrics.module';
import { RateLimitGuard } from './rate-limit.guard';
import { RateLimitStorage } from './rate-limit.storage';

/**
 * Per-key rate limits (README "Limits and hardening"): counters in Redis shared by every API
 * instance. The guard is global, mounted by configureApp (see RateLimitGuard).
 */
@Module({
  imports: [MetricsModule],
  providers: [RateLimitStorage, RateLimitGuard],
  exports: [RateLimitGuard],
})
export class ThrottleModule {}
