import { Module } from '@nestjs/common';

import { AdmissionSweeper } from './admission-sweeper';
import { HashQueueModule } from './hash-queue.module';
import { JobAdmission } from './job-admission';
import { TenantsRepository } from './tenants.repository';

/**
 * Tenants and the admission of their jobs (docs/tenants.md): TenantsRepository, JobAdmission and
 * its AdmissionSweeper. Needs HashqConfigModule, DatabaseModule and BullModule.forRoot in the app.
 */
@Module({
  imports: [HashQueueModule],
  providers: [TenantsRepository, JobAdmission, AdmissionSweeper],
  exports: [TenantsRepository, JobAdmission],
})
export class TenantStoreModule {}
