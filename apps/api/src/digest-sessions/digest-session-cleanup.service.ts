import { HASHQ_CONFIG, HASHQ_LOGGER, type HashqConfig } from '@hashq/config';
import { PeriodicTask } from '@hashq/jobs';
import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';

import { DigestSessionsService } from './digest-sessions.service';

/**
 * Every DIGEST_SESSION_CLEANUP_SECONDS, the hash states and digests of sessions idle past their
 * expiry are deleted (DigestSessionsService.expire). Every API instance sweeps; the statements are
 * idempotent, so instances sweeping at once do no harm.
 */
@Injectable()
export class DigestSessionCleanup extends PeriodicTask {
  constructor(
    private readonly sessions: DigestSessionsService,
    @Inject(HASHQ_CONFIG) private readonly config: HashqConfig,
    @Inject(HASHQ_LOGGER) logger: Logger,
  ) {
    super(logger);
  }

  /** One sweep; a failure is logged, not thrown. */
  sweep(): Promise<void> {
    return this.round();
  }

  protected periodMs(): number {
    return this.config.digestSessionCleanupSeconds * 1000;
  }

  protected async run(): Promise<void> {
    const swept = await this.sessions.expire(this.config.digestSessionExpiresSeconds);
    if (swept.expired > 0 || swept.deleted > 0) this.logger.info(swept, 'digest sessions expired');
  }

  protected failure(): { message: string } {
    return { message: 'digest session cleanup failed; retried at the next round' };
  }
}
