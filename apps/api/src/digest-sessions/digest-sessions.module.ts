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
  providers: [DigestSessionsService, DigestSessionsRepository, DigestSessionCleanup, JobRequestValidator],
})
export class DigestSessionsModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(tusResumable).forRoutes(DigestSessionsController);
  }
}
