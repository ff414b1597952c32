import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { Logger } from 'pino';

import { HASHQ_LOGGER } from '@hashq/config';

import { AllExceptionsFilter } from './common/all-exceptions.filter';
import { requestLogger } from './common/request-logger.middleware';
import { createValidationPipe } from './common/validation.pipe';
import { FileSourceDto } from './jobs/dto/create-job.dto';

/** Everything main.ts and the e2e tests both need on the app: logging, errors, validation, /docs. */
export function configureApp(app: INestApplication): INestApplication {
  const logger = app.get<Logger>(HASHQ_LOGGER);
  app.use(requestLogger(logger));
  app.useGlobalFilters(new AllExceptionsFilter(logger));
  app.useGlobalPipes(createValidationPipe());
  app.enableShutdownHooks();

  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('hashq')
      .setDescription(
        'Durable hashing service: submit a file and up to 8 algorithms, the digests survive killed workers. ' +
          'Every error is { "error": { "code", "message", "details" } }.',
      )
      .setVersion('1')
      .build(),
    { extraModels: [FileSourceDto] },
  );
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs/json' });
  return app;
}
