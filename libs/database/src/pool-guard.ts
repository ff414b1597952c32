import pg from 'pg';

/** Message and code only: a pg error may carry the client and its connection settings. */
export function pgErrorSummary(error: unknown): { message: string; code?: string } {
  const e = error as { message?: unknown; code?: unknown } | null | undefined;
  return {
    message: String(e?.message ?? error),
    code: typeof e?.code === 'string' ? e.code : undefined,
  };
}

/**
 * A pg Client class whose instances carry a permanent 'error' listener from their construction,
 * given to the pool as its `Client` (pg-pool's option). pg-pool listens while a client is idle and
 * TypeORM while a query runner holds it, yet with pg_terminate_backend repeated mid-job a
 * terminated connection emitted 'error' at a moment when neither listened, and the EventEmitter's
 * throw killed the worker ("Unhandled 'error' event"). With this listener the error only goes to
 * `onError`; a query on such a client fails with a connection error (an API request answers 503,
 * a worker write retries) and pg-pool drops the client when it comes back.
 */
export function guardedClientClass(onError: (err: Error) => void): typeof pg.Client {
  return class GuardedClient extends pg.Client {
    constructor(config?: string | pg.ClientConfig) {
      super(config);
      this.on('error', onError);
    }
  };
}
