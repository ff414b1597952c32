/**
 * How a checkpoint or heartbeat write rides out a PostgreSQL outage: it is retried
 * with capped exponential backoff while `isTransient` says the error is about the
 * connection, for at most `maxMs` in all; then the last error is thrown (the attempt
 * fails as it would without retries). Meanwhile the run keeps its hash states in
 * memory; the write-behind slot stays busy, so hashing stops at the checkpoint lag
 * bound until the write commits.
 */
export interface OutageRetryPolicy {
  /** Total time spent retrying one write; 0 disables retries. */
  maxMs: number;
  /** First delay; each retry doubles it up to maxDelayMs (±20 % jitter). */
  initialDelayMs: number;
  maxDelayMs: number;
  isTransient(error: unknown): boolean;
  /** Told before each wait (attempt 1 = the first retry). */
  onRetry?(error: unknown, attempt: number, delayMs: number, elapsedMs: number): void;
  /** Told when a write succeeded after retries. */
  onRecovered?(attempts: number, elapsedMs: number): void;
  sleep?(ms: number): Promise<void>;
  now?(): number;
}

export async function retryWhileUnavailable<T>(
  write: () => Promise<T>,
  policy: OutageRetryPolicy,
): Promise<T> {
  const now = policy.now ?? Date.now;
  const sleep =
    policy.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const started = now();
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await write();
      if (attempt > 1) policy.onRecovered?.(attempt - 1, now() - started);
      return result;
    } catch (error) {
      if (!policy.isTransient(error)) throw error;
      const base = Math.min(
        policy.maxDelayMs,
        policy.initialDelayMs * 2 ** Math.min(attempt - 1, 30),
      );
      const delay = Math.round(base * (0.8 + 0.4 * Math.random()));
      const elapsed = now() - started;
      if (elapsed + delay > policy.maxMs) throw error;
      policy.onRetry?.(error, attempt, delay, elapsed);
      await sleep(delay);
    }
  }
}
