import { BullModule, InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, Module, type OnModuleInit } from '@nestjs/common';
import type { Queue } from 'bullmq';
import type { Logger } from 'pino';

import { HASHQ_LOGGER } from '@hashq/config';
import { HASH_QUEUE } from '@hashq/jobs';

/** Redis errors of the producer go to the JSON log, at most one line per 10 s while Redis is away. */
@Injectable()
class QueueErrorLogger implements OnModuleInit {
  private lastLogged = 0;

  constructor(
    @InjectQueue(HASH_QUEUE) private readonly queue: Queue,
    @Inject(HASHQ_LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    this.queue.on('error', (err: Error) => {
      const now = Date.now();
      if (now - this.lastLogged < 10_000) return;
      this.lastLogged = now;
      this.logger.warn({ err: { message: err.message, code: (err as NodeJS.ErrnoException).code } }, 'redis unavailable');
    });
  }
}

/** The hash queue, registered once so jobs and metrics share one producer connection. */
@Module({
  imports: [BullModule.registerQueue({ name: HASH_QUEUE })],
  providers: [QueueErrorLogger],
  exports: [BullModule],
})
export class QueueModule {}
