import { HASHQ_CONFIG, HASHQ_LOGGER, type HashqConfig } from '@hashq/config';
import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';

import { JobAdmission } from './job-admission';
import { PeriodicTask } from './periodic-task';

/**
 * The safety net of admission: every RECONCILE_SECONDS (and at start), fills the free slots of every
 * tenant with held jobs. Needed only when the process that ended a job died before its fill, or
 * when a tenant's max_running_jobs was raised or removed; the API and every worker run one.
 */
@Injectable()
export class AdmissionSweeper extends PeriodicTask {
  constructor(
    private readonly admission: JobAdmission,
    @Inject(HASHQ_CONFIG) private readonly config: HashqConfig,
    @Inject(HASHQ_LOGGER) logger: Logger,
  ) {
    super(logger);
  }

  /** A first round at start, without holding the start up (PostgreSQL may be slow to answer). */
  override async onApplicationBootstrap(): Promise<void> {
    await super.onApplicationBootstrap();
    void this.round();
  }

  /** One round now (tests); a failure is logged, not thrown. */
  sweep(): Promise<void> {
    return this.round();
  }

  protected periodMs(): number {
    return this.config.reconcileSeconds * 1000;
  }

  protected async run(): Promise<void> {
    const admitted = await this.admission.fillAll();
    if (admitted > 0) this.logger.info({ admitted }, 'held jobs admitted by the sweep');
  }

  protected failure(): { message: string } {
    return { message: 'admission sweep failed; retried at the next round' };
  }
}
