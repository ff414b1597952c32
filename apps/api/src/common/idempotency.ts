import { createHash } from 'node:crypto';

import { ApiError } from './api-error';

export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** Stable JSON (sorted keys) of a request, so equal bodies hash equal whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** A submit route's Idempotency-Key must be 1 to MAX_IDEMPOTENCY_KEY_LENGTH characters. */
export function checkIdempotencyKey(idempotencyKey: string | undefined): void {
  if (
    idempotencyKey !== undefined &&
    (idempotencyKey.length === 0 || idempotencyKey.length > MAX_IDEMPOTENCY_KEY_LENGTH)
  ) {
    throw ApiError.badRequest(
      'INVALID_IDEMPOTENCY_KEY',
      `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`,
    );
  }
}

/**
 * The sha256 of the canonical request body, stored beside an Idempotency-Key (a replay with
 * another body is IDEMPOTENCY_KEY_REUSED); undefined without a key.
 */
export function idempotencyRequestHash(
  idempotencyKey: string | undefined,
  body: unknown,
): string | undefined {
  return idempotencyKey === undefined
    ? undefined
    : createHash('sha256').update(canonicalJson(body)).digest('hex');
}
