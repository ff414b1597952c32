import type { IncomingMessage, ServerResponse } from 'node:http';

import { HASHQ_CONFIG, HASHQ_LOGGER, type HashqConfig } from '@hashq/config';
import type {
  NestExpressApplication,
  NestExpressBodyParserOptionsFor,
} from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { json } from 'express';
import type { Logger } from 'pino';

import { AllExceptionsFilter } from './common/all-exceptions.filter';
import { answerClientErrorsInJson } from './common/client-errors';
import { requestLogger } from './common/request-logger.middleware';
import { createValidationPipe } from './common/validation.pipe';
import { FileSourceDto } from './jobs/dto/create-job.dto';

/**
 * body-parser's verify hook, which gets the charset body-parser is about to decode with: JSON is
 * UTF-8 (RFC 8259, section 8.1), so utf-16, utf-7 and the like are a 415 instead of decoded.
 */
function utf8Only(
  _req: IncomingMessage,
  _res: ServerResponse,
  _body: Buffer,
  charset: string,
): void {
  if (charset.toLowerCase() !== 'utf-8') {
    throw Object.assign(
      new Error(`unsupported charset "${charset.toUpperCase()}": JSON bodies are UTF-8`),
      {
        status: 415,
        type: 'charset.unsupported',
      },
    );
  }
}

/**
 * Everything main.ts and the e2e tests both need on the app: logging, errors, validation, /docs.
 * The app is created with `bodyParser: false`: JSON is the only body format parsed (a form-encoded
 * or text body parses to nothing and fails validation).
 */
export function configureApp(app: NestExpressApplication): NestExpressApplication {
  const logger = app.get<Logger>(HASHQ_LOGGER);
  app.disable('x-powered-by');
  answerClientErrorsInJson(app.getHttpServer());
  app.use(requestLogger(logger));
  // A batch may carry an inline manifest or SUM file up to BATCH_MANIFEST_MAX_BYTES (JSON escaping
  // can double a text): its route parses bodies that large; every other route keeps the default.
  const { manifestMaxBytes } = app.get<HashqConfig>(HASHQ_CONFIG).batches;
  app.use('/v1/batches', json({ limit: 2 * manifestMaxBytes + 65536, verify: utf8Only }));
  // Nest's type leaves out `verify` because its rawBody option sets one; this app does not use rawBody.
  app.useBodyParser('json', { verify: utf8Only } as NestExpressBodyParserOptionsFor<'json'>);
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
