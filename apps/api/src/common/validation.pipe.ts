import { type ArgumentMetadata, type ValidationError, ValidationPipe } from '@nestjs/common';

import { ApiError } from './api-error';

/**
 * Deepest JSON nesting a body may have (the body itself is level 1; a job's deepest field,
 * source.headers, is level 3). class-transformer and class-validator recurse once per level, so a
 * few thousand levels in under 100 kB would overflow the stack.
 */
export const MAX_BODY_DEPTH = 32;

/**
 * Keys class-transformer drops without a word (prototype-pollution guard): refused like any
 * unknown key instead, wherever they are in the body.
 */
const RESERVED_KEYS = new Set(['__proto__', 'constructor']);

/**
 * Walks the parsed body without recursion: INVALID_BODY when it nests deeper than MAX_BODY_DEPTH,
 * VALIDATION_FAILED naming every reserved key.
 */
function checkBody(body: unknown): void {
  const reserved: string[] = [];
  const pending: { value: unknown; depth: number; path: string }[] = [
    { value: body, depth: 1, path: '' },
  ];
  for (let item = pending.pop(); item; item = pending.pop()) {
    if (typeof item.value !== 'object' || item.value === null) continue;
    if (item.depth > MAX_BODY_DEPTH) {
      throw ApiError.badRequest(
        'INVALID_BODY',
        `the JSON body nests deeper than ${MAX_BODY_DEPTH} levels`,
        {
          maxDepth: MAX_BODY_DEPTH,
        },
      );
    }
    for (const [key, child] of Object.entries(item.value)) {
      const path = item.path ? `${item.path}.${key}` : key;
      if (RESERVED_KEYS.has(key)) reserved.push(path);
      pending.push({ value: child, depth: item.depth + 1, path });
    }
  }
  if (reserved.length > 0) {
    const key = (path: string) => path.split('.').pop();
    throw validationError(
      reserved.map((field) => ({ field, problems: [`property ${key(field)} should not exist`] })),
    );
  }
}

interface FieldProblems {
  field: string;
  problems: string[];
}

/** Flattens class-validator errors into [{ field: "a.b", problems: [...] }]. */
function flatten(errors: ValidationError[], parent = ''): FieldProblems[] {
  return errors.flatMap((err) => {
    const field = parent ? `${parent}.${err.property}` : err.property;
    const own = err.constraints ? [{ field, problems: Object.values(err.constraints) }] : [];
    return [...own, ...flatten(err.children ?? [], field)];
  });
}

/** A VALIDATION_FAILED lists at most this many fields; its message counts the rest. */
export const MAX_DETAILS = 20;
/** Field names and problems are cut to this many characters (one key may be 100 kB long). */
const MAX_TEXT = 120;

const cut = (text: string): string =>
  text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text;

/** VALIDATION_FAILED for the first MAX_DETAILS fields, so the answer stays small whatever the body. */
function validationError(all: FieldProblems[]): ApiError {
  const details = all
    .slice(0, MAX_DETAILS)
    .map(({ field, problems }) => ({ field: cut(field), problems: problems.map(cut) }));
  const rest = all.length - details.length;
  const summary = details.map((d) => `${d.field}: ${d.problems.join(', ')}`).join('; ');
  return ApiError.validation(
    (summary || 'invalid request') + (rest > 0 ? `; and ${rest} more fields` : ''),
    details,
  );
}

/** Nest's ValidationPipe behind checkBody for bodies. */
class BodyCheckingValidationPipe extends ValidationPipe {
  override transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body') checkBody(value);
    return super.transform(value, metadata);
  }
}

/**
 * DTO validation for every route: unknown fields are refused, and no implicit type
 * conversion happens in bodies ("5" is not a number). A failure is a VALIDATION_FAILED 400.
 */
export function createValidationPipe(): ValidationPipe {
  return new BodyCheckingValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    exceptionFactory: (errors) => validationError(flatten(errors)),
  });
}
