import { BullModule } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';

import { HASH_QUEUE } from '@hashq/jobs';

/** The hash queue, registered once so jobs, health and metrics share one producer connection. */
@Module({
  imports: [BullModule.registerQueue({ name: HASH_QUEUE })],
  exports: [BullModule],
})
export class QueueModule {}
