import { isConnectionError } from '@hashq/database';
import {
  type ArgumentsHost,
  Catch,
  type ExceptionFilter,
  HttpException,
  HttpStatus,
} from '@nestjs/common';
import type { Response } from 'express';
import type { Logger } from 'pino';

import { ApiError, type ApiErrorCode, type ErrorBody, errorBody as error } from './api-error';
import { requestIdOf } from './request-id.middleware';

/** Codes of Nest's and Express's own HTTP errors (routing, body parsing); see clientError. */
const CODES_BY_STATUS: Record<number, ApiErrorCode> = {
  400: 'BAD_REQUEST',
  404: 'NOT_FOUND',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
};

/**
 * Largest error answer: details echo parts of the request (a source, a field name), so an answer
 * over this size keeps its code and the start of its message, and its details become
 * { truncated: true }. A client never gets back much more than it sent, nor much more than this.
 */
export const MAX_ERROR_BYTES = 16 * 1024;
const MAX_MESSAGE_CHARS = 1024;

/** body-parser marks its errors with `type` and the HTTP status to answer (`limit`: when too large). */
interface BodyParserError extends Error {
  type: string;
  status: number;
  limit?: number;
}

function isBodyParserError(err: unknown): err is BodyParserError {
  return (
    err instanceof Error && typeof (err as BodyParserError).type === 'string' && 'status' in err
  );
}

/**
 * Turns every exception into { error: { code, message, details, requestId } }. Client mistakes
 * keep their 4xx; anything unexpected is logged (with the request id) and answered with a bare 500
 * that leaks nothing: no stack, no SQL, no driver message.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  constructor(private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    const { status, body } = this.describe(exception);
    const requestId = requestIdOf(response);
    if (status === HttpStatus.SERVICE_UNAVAILABLE)
      this.logger.warn({ requestId, err: (exception as Error).message }, 'database unavailable');
    else if (status >= 500) this.logger.error({ requestId, err: exception }, 'unhandled error');
    if (response.headersSent) return;
    const bounded = boundedBody(body);
    response.status(status).json(requestId ? { error: { ...bounded.error, requestId } } : bounded);
  }

  private describe(exception: unknown): { status: number; body: ErrorBody } {
    if (exception instanceof ApiError) {
      return { status: exception.getStatus(), body: exception.getResponse() as ErrorBody };
    }
    if (isBodyParserError(exception)) {
      return this.bodyParser(exception);
    }
    if (exception instanceof HttpException) {
      const cause = exception.cause;
      if (isBodyParserError(cause)) return this.bodyParser(cause);
      const status = exception.getStatus();
      return status >= 500 ? internalError() : clientError(status, exception.message);
    }
    // PostgreSQL unreachable or the connection dropped: 503 with a code, and the pool reconnects by itself.
    if (isConnectionError(exception)) {
      return {
        status: HttpStatus.SERVICE_UNAVAILABLE,
        body: error('DATABASE_UNAVAILABLE', 'PostgreSQL is unavailable; retry later'),
      };
    }
    return internalError();
  }

  private bodyParser(err: BodyParserError): { status: number; body: ErrorBody } {
    if (err.type === 'entity.parse.failed') {
      return {
        status: 400,
        body: error('MALFORMED_JSON', 'request body is not valid JSON', { reason: err.message }),
      };
    }
    if (err.type === 'entity.too.large') {
      return clientError(413, `the JSON body is larger than ${err.limit} bytes`, {
        type: err.type,
        limit: err.limit,
      });
    }
    return clientError(err.status, err.message, { type: err.type });
  }
}

/** A client mistake with its code; a status without a code of its own becomes 400 BAD_REQUEST. */
function clientError(
  status: number,
  message: string,
  details?: unknown,
): { status: number; body: ErrorBody } {
  const code = CODES_BY_STATUS[status];
  if (!code)
    return { status: HttpStatus.BAD_REQUEST, body: error('BAD_REQUEST', message, details) };
  return { status, body: error(code, message, details) };
}

function internalError(): { status: number; body: ErrorBody } {
  return {
    status: HttpStatus.INTERNAL_SERVER_ERROR,
    body: error('INTERNAL_ERROR', 'internal server error'),
  };
}

function boundedBody(body: ErrorBody): ErrorBody {
  if (Buffer.byteLength(JSON.stringify(body)) <= MAX_ERROR_BYTES) return body;
  const { code, message } = body.error;
  const cut =
    message.length > MAX_MESSAGE_CHARS ? `${message.slice(0, MAX_MESSAGE_CHARS)}…` : message;
  return error(code, cut, { truncated: true });
}
