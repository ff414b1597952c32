import type { IncomingMessage, ServerResponse } from 'node:http';

import { HASHQ_CONFIG, HASHQ_LOGGER, type HashqConfig } from '@hashq/config';
import type {
  NestExpressApplication,
  NestExpressBodyParserOptionsFor,
} from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { Logger } from 'pino';

import { WWW_AUTHENTICATE } from './auth/auth.guard';
import { docsAccess } from './auth/docs-access';
import { KeyVerifier } from './auth/key-verifier';
import { SCOPES } from './auth/principal';
import { documentScopes, routeAccess } from './auth/route-scopes';
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
      .addBearerAuth({
        type: 'http',
        scheme: 'bearer',
        description: `An API key hq_<id>_<secret>. Scopes: ${SCOPES.join(', ')} (admin implies all). No key, an unknown, expired or revoked one: 401 UNAUTHORIZED with WWW-Authenticate: ${WWW_AUTHENTICATE}; a key without the route's scope: 403 SCOPE_MISSING.`,
      })
      .build(),
    { extraModels: [FileSourceDto] },
  );
  documentScopes(document, routeAccess(app));
  app.use('/docs', docsAccess(app.get<HashqConfig>(HASHQ_CONFIG), app.get(KeyVerifier)));
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs/json' });
  return app;
}
