import { HttpException, HttpStatus } from '@nestjs/common';

/** The body of every error response: { error: { code, message, details } }. */
export interface ErrorBody {
  error: { code: string; message: string; details: unknown };
}

/** An HTTP error with a stable machine-readable code. */
export class ApiError extends HttpException {
  constructor(
    status: HttpStatus,
    readonly code: string,
    message: string,
    readonly details: unknown = null,
  ) {
    super({ error: { code, message, details } } satisfies ErrorBody, status);
  }

  static badRequest(code: string, message: string, details?: unknown): ApiError {
    return new ApiError(HttpStatus.BAD_REQUEST, code, message, details);
  }

  static validation(message: string, details?: unknown): ApiError {
    return ApiError.badRequest('VALIDATION_FAILED', message, details);
  }
}
