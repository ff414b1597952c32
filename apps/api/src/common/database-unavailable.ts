/**
 * True when an error means "PostgreSQL cannot be reached right now" (refused,
 * reset, terminated by the server, pool timeout) rather than a bad query: the
 * API answers 503 DATABASE_UNAVAILABLE for it, never a 500, and recovers by
 * itself when the database is back (the pool opens new connections).
 */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
// SQLSTATE class 08 (connection exception) and 57P01..57P03 (admin shutdown, crash shutdown, cannot connect now).
const SQLSTATES = /^(08...|57P0[123])$/;
const MESSAGES = /Connection terminated|timeout exceeded when trying to connect|connection (is )?(closed|terminated)|Client has encountered a connection error/i;

export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 4) return false;
  const e = err as { code?: unknown; message?: unknown; driverError?: unknown; cause?: unknown; errors?: unknown };
  if (typeof e.code === 'string' && (NETWORK_CODES.has(e.code) || SQLSTATES.test(e.code))) return true;
  if (typeof e.message === 'string' && MESSAGES.test(e.message)) return true;
  if (Array.isArray(e.errors) && e.errors.some((inner) => isDatabaseUnavailable(inner, depth + 1))) return true; // AggregateError
  return isDatabaseUnavailable(e.driverError, depth + 1) || isDatabaseUnavailable(e.cause, depth + 1);
}
