import { Module } from '@nestjs/common';

import { JobsRepository } from './jobs.repository';

/** Provides JobsRepository; needs the TypeORM connection of DatabaseModule in the app. */
@Module({
  providers: [JobsRepository],
  exports: [JobsRepository],
})
export class JobStoreModule {}
