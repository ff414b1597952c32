import { HASHQ_CONFIG, HASHQ_LOGGER, type HashqConfig } from '@hashq/config';
import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import type { Logger } from 'pino';

import { DigestSessionsRepository } from './digest-sessions.repository';

/**
 * Every DIGEST_SESSION_CLEANUP_SECONDS, the hash states of sessions idle past their expiry are
 * deleted (see DigestSessionsRepository.sweepExpired). Every API instance sweeps; the statements
 * are idempotent, so instances sweeping at once do no harm.
 */
@Injectable()
export class DigestSessionCleanup implements OnApplicationBootstrap, OnModuleDestroy {
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly sessions: DigestSessionsRepository,
    @Inject(HASHQ_CONFIG) private readonly config: HashqConfig,
    @Inject(HASHQ_LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(
      () => void this.sweep(),
      this.config.digestSessionCleanupSeconds * 1000,
    );
    this.timer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  async sweep(): Promise<void> {
    try {
      const swept = await this.sessions.sweepExpired(this.config.digestSessionExpiresSeconds);
      if (swept.expired > 0 || swept.deleted > 0)
        this.logger.info(swept, 'digest sessions expired');
    } catch (err) {
      this.logger.warn(
        { err: (err as Error).message },
        'digest session cleanup failed; retried at the next round',
      );
    }
  }
}
