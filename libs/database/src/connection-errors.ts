/**
 * One answer, for the API and the worker, to "did PostgreSQL fail to answer, or answer no?".
 * The API turns a connection error into 503 DATABASE_UNAVAILABLE (never a 500) and recovers by
 * itself when the database is back (the pool opens new connections); the worker retries the same
 * idempotent fenced statement through an outage (PG_OUTAGE_MAX_SECONDS).
 */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
// SQLSTATE class 08 (connection exception), 57P01..57P03 (admin/crash shutdown, cannot connect now),
// 53300 (too many connections).
const SQLSTATES = /^(08...|57P0[123]|53300)$/;
const MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|connection (is )?(closed|terminated)|Client has encountered a connection error|not currently accepting connections|the database system is (starting up|shutting down)/i;

/**
 * True when PostgreSQL could not be reached or dropped the connection (the statement may or may
 * not have run), looking through TypeORM's `driverError`, `cause` and AggregateError's `errors`.
 * Any answer of the server (a constraint violation, a syntax error) or an error of the caller's
 * own (e.g. a lost lease) is not.
 */
export function isConnectionError(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 4) return false;
  const e = err as {
    code?: unknown;
    message?: unknown;
    driverError?: unknown;
    cause?: unknown;
    errors?: unknown;
  };
  if (typeof e.code === 'string' && (NETWORK_CODES.has(e.code) || SQLSTATES.test(e.code)))
    return true;
  if (typeof e.message === 'string' && MESSAGES.test(e.message)) return true;
  if (Array.isArray(e.errors) && e.errors.some((inner) => isConnectionError(inner, depth + 1)))
    return true; // AggregateError
  return isConnectionError(e.driverError, depth + 1) || isConnectionError(e.cause, depth + 1);
}
