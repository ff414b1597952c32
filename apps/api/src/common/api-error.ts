import { HttpException, HttpStatus } from '@nestjs/common';

/**
 * Every code an error answer of the API can carry. ApiError and the exception filter take only
 * these, and README's error table lists exactly these (test/api-http-errors.e2e-spec.ts).
 */
export const API_ERROR_CODES = [
  // 400
  'MALFORMED_REQUEST',
  'MALFORMED_JSON',
  'INVALID_BODY',
  'BAD_REQUEST',
  'VALIDATION_FAILED',
  'UNKNOWN_ALGORITHM',
  'DUPLICATE_ALGORITHM',
  'OUTPUT_LENGTH_NOT_SUPPORTED',
  'CUSTOMIZATION_NOT_SUPPORTED',
  'INVALID_EXPECTED_DIGEST',
  'S3_CHECKSUM_NOT_SUPPORTED',
  'INVALID_SOURCE',
  'INVALID_IDEMPOTENCY_KEY',
  'INVALID_ID',
  'INVALID_UPLOAD_OFFSET',
  'INVALID_UPLOAD_LENGTH',
  'INVALID_UPLOAD_METADATA',
  'UPLOAD_METADATA_TOO_LARGE',
  'INVALID_UPLOAD_CHECKSUM',
  'CHECKSUM_ALGORITHM_NOT_SUPPORTED',
  'UPLOAD_INTERRUPTED',
  'MANIFEST_LINE_INVALID',
  'INVALID_WEBHOOK_URL',
  // 401
  'UNAUTHORIZED',
  // 403
  'SCOPE_MISSING',
  'PATH_OUTSIDE_ROOTS',
  'SOURCE_FORBIDDEN',
  'SOURCE_ADDRESS_FORBIDDEN',
  'SOURCE_NOT_ALLOWED',
  // 404
  'JOB_NOT_FOUND',
  'BENCHMARK_NOT_FOUND',
  'SESSION_NOT_FOUND',
  'NOT_FOUND',
  'KEY_NOT_FOUND',
  'TENANT_NOT_FOUND',
  'BATCH_NOT_FOUND',
  'WEBHOOK_NOT_FOUND',
  // 408
  'REQUEST_TIMEOUT',
  // 409
  'IDEMPOTENCY_KEY_REUSED',
  'JOB_FINISHED',
  'BENCHMARK_NOT_FINISHED',
  'OFFSET_MISMATCH',
  'TENANT_EXISTS',
  'BATCH_FINISHED',
  'BATCH_NOT_RETRYABLE',
  // 410, 412
  'SESSION_EXPIRED',
  'UNSUPPORTED_TUS_VERSION',
  // 413, 415
  'PAYLOAD_TOO_LARGE',
  'UPLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  // 422
  'SOURCE_NOT_FOUND',
  'NOT_A_REGULAR_FILE',
  'BENCHMARK_NO_WORKER',
  'STATE_INVALID',
  // 429
  'BENCHMARK_LIMIT_REACHED',
  'TENANT_QUEUE_FULL',
  'RATE_LIMITED',
  'BATCH_LIMIT_REACHED',
  'WEBHOOK_LIMIT_REACHED',
  // 431
  'HEADERS_TOO_LARGE',
  // 460 (tus checksum extension)
  'CHECKSUM_MISMATCH',
  // 500, 503
  'INTERNAL_ERROR',
  'DATABASE_UNAVAILABLE',
  'SOURCE_READ_FAILED',
] as const;

export type ApiErrorCode = (typeof API_ERROR_CODES)[number];

/**
 * The body of every error response: { error: { code, message, details, requestId } }; the
 * exception filter adds the request's id (X-Request-Id) as it answers.
 */
export interface ErrorBody {
  error: { code: ApiErrorCode; message: string; details: unknown; requestId?: string };
}

export function errorBody(code: ApiErrorCode, message: string, details: unknown = null): ErrorBody {
  return { error: { code, message, details } };
}

/** An HTTP error with a stable machine-readable code. */
export class ApiError extends HttpException {
  constructor(
    status: HttpStatus,
    readonly code: ApiErrorCode,
    message: string,
    readonly details: unknown = null,
  ) {
    super(errorBody(code, message, details), status);
  }

  static badRequest(code: ApiErrorCode, message: string, details?: unknown): ApiError {
    return new ApiError(HttpStatus.BAD_REQUEST, code, message, details);
  }

  static validation(message: string, details?: unknown): ApiError {
    return ApiError.badRequest('VALIDATION_FAILED', message, details);
  }
}
