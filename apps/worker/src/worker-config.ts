/**
 * Worker-only settings on top of @hashq/config (BullMQ's stall detection and
 * the shutdown deadline); see apps/worker/README.md for why these values.
 */
export interface WorkerSettings {
  /** BullMQ lock on an active job; renewed every half of it while the event loop is free. */
  lockDurationMs: number;
  /** How often workers look for jobs whose lock expired (their worker died). */
  stalledIntervalMs: number;
  /** Stalls (dead workers) one job survives before BullMQ fails it. */
  maxStalledCount: number;
  /** A stopping worker exits after this long even if its job was not handed back. */
  shutdownTimeoutMs: number;
  /**
   * PostgreSQL outage: how long one heartbeat/checkpoint write is retried (capped exponential
   * backoff, the hash states kept in memory) before the attempt fails; 0 = no retries.
   */
  pgOutageMaxMs: number;
}

export const WORKER_SETTINGS = Symbol('WORKER_SETTINGS');

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new Error(`invalid ${name}="${raw}": expected an integer between ${min} and ${max}`);
  }
  return value;
}

export function loadWorkerSettings(env: NodeJS.ProcessEnv = process.env): WorkerSettings {
  return {
    lockDurationMs: integer(env, 'WORKER_LOCK_DURATION_MS', 60_000, 1_000, 3_600_000),
    stalledIntervalMs: integer(env, 'WORKER_STALLED_INTERVAL_MS', 30_000, 500, 3_600_000),
    maxStalledCount: integer(env, 'WORKER_MAX_STALLED_COUNT', 10, 0, 1_000),
    shutdownTimeoutMs: integer(env, 'WORKER_SHUTDOWN_TIMEOUT_MS', 9_000, 100, 60_000),
    pgOutageMaxMs: integer(env, 'PG_OUTAGE_MAX_SECONDS', 300, 0, 86_400) * 1000,
  };
}
