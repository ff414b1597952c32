import { ValidationPipe, type ValidationError } from '@nestjs/common';

import { ApiError } from './api-error';

/** Flattens class-validator errors into [{ field: "a.b", problems: [...] }]. */
function flatten(errors: ValidationError[], parent = ''): { field: string; problems: string[] }[] {
  return errors.flatMap((err) => {
    const field = parent ? `${parent}.${err.property}` : err.property;
    const own = err.constraints ? [{ field, problems: Object.values(err.constraints) }] : [];
    return [...own, ...flatten(err.children ?? [], field)];
  });
}

/**
 * DTO validation for every route: unknown fields are refused, and no implicit type
 * conversion happens in bodies ("5" is not a number). A failure is a VALIDATION_FAILED 400.
 */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    exceptionFactory: (errors) => {
      const details = flatten(errors);
      const summary = details.map((d) => `${d.field}: ${d.problems.join(', ')}`).join('; ');
      return ApiError.validation(summary || 'invalid request', details);
    },
  });
}
