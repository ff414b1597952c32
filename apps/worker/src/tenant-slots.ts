import { HASHQ_LOGGER } from '@hashq/config';
import { type HashJobData, JobAdmission } from '@hashq/jobs';
import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { Job } from 'bullmq';
import type { Logger } from 'pino';

import { HashProcessor } from './hash.processor';

/**
 * Hands a tenant's freed slot on (max_running_jobs, docs/tenants.md): when a job admitted under
 * its tenant's limit settles in this worker (completed, or failed: a retry keeps its slot and the
 * fill is then a no-op), the tenant's next held jobs are admitted and enqueued. Jobs without a
 * tenant in their BullMQ data (every job of a tenant without a limit) cost nothing here. A crash
 * before the fill is covered by the AdmissionSweeper.
 */
@Injectable()
export class TenantSlots implements OnApplicationBootstrap {
  constructor(
    private readonly processor: HashProcessor,
    private readonly admission: JobAdmission,
    @Inject(HASHQ_LOGGER) private readonly log: Logger,
  ) {}

  onApplicationBootstrap(): void {
    const worker = this.processor.worker;
    worker.on('completed', (job: Job<HashJobData>) => this.settled(job));
    worker.on('failed', (job: Job<HashJobData> | undefined) => this.settled(job));
  }

  private settled(job: Job<HashJobData> | undefined): void {
    const tenantId = job?.data.tenantId;
    if (!tenantId) return;
    this.admission
      .fill(tenantId)
      .catch((err: unknown) =>
        this.log.warn(
          { jobId: job.data.jobId, tenantId, err: (err as Error).message },
          'could not admit the next job of the tenant; the sweep will',
        ),
      );
  }
}
