import { HASHQ_CONFIG, HASHQ_LOGGER, type HashqConfig } from '@hashq/config';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { Logger } from 'pino';

import { WWW_AUTHENTICATE } from './auth/auth.guard';
import { docsAccess } from './auth/docs-access';
import { KeyVerifier } from './auth/key-verifier';
import { SCOPES } from './auth/principal';
import { documentScopes, routeAccess } from './auth/route-scopes';
import { AllExceptionsFilter } from './common/all-exceptions.filter';
import { useJsonBodyParsers } from './common/body-limits';
import { answerClientErrorsInJson } from './common/client-errors';
import { boundHttpServer } from './common/http-server';
import { requestId } from './common/request-id.middleware';
import { requestLogger } from './common/request-logger.middleware';
import { spreadRequestStarts } from './common/request-starts';
import { securityHeaders } from './common/security-headers';
import { createValidationPipe } from './common/validation.pipe';
import { FileSourceDto } from './jobs/dto/create-job.dto';
import { RateLimitGuard } from './throttle/rate-limit.guard';

const DOCS_PATH = 'docs';

/**
 * Everything main.ts and the e2e tests both need on the app: request ids, security headers,
 * logging, body limits, errors, validation, rate limits, server timeouts, request starts spread
 * over event-loop turns, /docs.
 * The app is created with `bodyParser: false`: JSON is the only body format parsed (a form-encoded
 * or text body parses to nothing and fails validation).
 */
export function configureApp(app: NestExpressApplication): NestExpressApplication {
  const logger = app.get<Logger>(HASHQ_LOGGER);
  const config = app.get<HashqConfig>(HASHQ_CONFIG);
  app.disable('x-powered-by');
  boundHttpServer(app.getHttpServer(), config.http);
  spreadRequestStarts(app.getHttpServer());
  answerClientErrorsInJson(app.getHttpServer(), logger);
  app.use(requestId());
  app.use(securityHeaders(DOCS_PATH));
  app.use(requestLogger(logger));
  useJsonBodyParsers(app, config);
  app.useGlobalFilters(new AllExceptionsFilter(logger));
  app.useGlobalPipes(createValidationPipe());
  // After the APP_GUARDs (authentication sets the principal it counts by): they were added when
  // the module was compiled, before this.
  app.useGlobalGuards(app.get(RateLimitGuard));
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
  app.use(`/${DOCS_PATH}`, docsAccess(app.get<HashqConfig>(HASHQ_CONFIG), app.get(KeyVerifier)));
  SwaggerModule.setup(DOCS_PATH, app, document, { jsonDocumentUrl: `${DOCS_PATH}/json` });
  return app;
}
