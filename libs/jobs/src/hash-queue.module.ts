import { HASHQ_LOGGER } from '@hashq/config';
import { BullModule, InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, Module, type OnModuleInit } from '@nestjs/common';
import type { Queue } from 'bullmq';
import type { Logger } from 'pino';

import { HASH_QUEUE } from './queue';
import { RedisErrorLogger } from './redis';

/** Redis errors of the hash queue go to the log, at most one line per 10 s while Redis is away. */
@Injectable()
class HashQueueErrors implements OnModuleInit {
  constructor(
    @InjectQueue(HASH_QUEUE) private readonly queue: Queue,
    @Inject(HASHQ_LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    new RedisErrorLogger(this.logger).watch(this.queue);
  }
}

/**
 * The hash queue (a producer on the app's BullModule connection), registered once per app so
 * every module that enqueues or counts jobs shares one connection.
 */
@Module({
  imports: [BullModule.registerQueue({ name: HASH_QUEUE })],
  providers: [HashQueueErrors],
  exports: [BullModule],
})
export class HashQueueModule {}
