import { HASHQ_CONFIG, type HashqConfig } from '@hashq/config';
import { BullModule } from '@nestjs/bullmq';
import type { DynamicModule } from '@nestjs/common';

import { redisOptions, type RedisRole } from './redis';

/** BullModule.forRoot from the configuration: Redis as `role` uses it, the queue prefix. */
export function bullRootModule(role: RedisRole): DynamicModule {
  return BullModule.forRootAsync({
    inject: [HASHQ_CONFIG],
    useFactory: (config: HashqConfig) => ({
      connection: redisOptions(config.redisUrl, role),
      prefix: config.queuePrefix,
    }),
  });
}
