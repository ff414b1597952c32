/** A dependency (Redis, PostgreSQL) that did not answer in time: it counts as down. */
export class TimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

/** Rejects with a TimeoutError when `promise` has not settled within `ms`; `what` names the dependency. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new TimeoutError(`${what} did not answer within ${ms} ms`)),
      ms,
    );
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
