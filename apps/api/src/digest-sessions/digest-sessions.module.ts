import { HASHQ_CONFIG, type HashqConfig } from '@hashq/config';
import { StateSealer } from '@hashq/crypto';
import { type MiddlewareConsumer, Module, type NestModule } from '@nestjs/common';

import { AlgorithmsModule } from '../algorithms/algorithms.module';
import { JobRequestValidator } from '../jobs/job-request.validator';
import { DigestSessionCleanup } from './digest-session-cleanup.service';
import { DigestSessionsController } from './digest-sessions.controller';
import { DigestSessionsRepository } from './digest-sessions.repository';
import { DigestSessionsService } from './digest-sessions.service';
import { tusResumable } from './tus-resumable.middleware';

@Module({
  imports: [AlgorithmsModule],
  controllers: [DigestSessionsController],
  providers: [
    DigestSessionsService,
    DigestSessionsRepository,
    DigestSessionCleanup,
    JobRequestValidator,
    // seals the states in digest_sessions (HASHQ_STATE_KEYS: the first key seals, all open)
    {
      provide: StateSealer,
      inject: [HASHQ_CONFIG],
      useFactory: (config: HashqConfig) => new StateSealer(config.stateKeys),
    },
  ],
  exports: [DigestSessionsRepository, DigestSessionsService],
})
export class DigestSessionsModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(tusResumable).forRoutes(DigestSessionsController);
  }
}
