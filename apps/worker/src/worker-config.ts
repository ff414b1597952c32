import { resolve } from 'node:path';

/** Everything the worker reads from the environment, validated once at start. */
export interface WorkerConfig {
  databaseUrl: string;
  databaseSchema: string;
  redisUrl: string;
  queuePrefix: string;
  fileRoots: string;
  chunkBytes: number;
  checkpointBytes: number;
  checkpointSeconds: number;
  concurrency: number;
  leaseSeconds: number;
  logLevel: string;
  /** BullMQ lock on an active job; renewed every half of it while the event loop is free. */
  lockDurationMs: number;
  /** How often workers look for jobs whose lock expired (a worker died). */
  stalledIntervalMs: number;
  /** Stalls (dead workers) one job survives before BullMQ fails it. */
  maxStalledCount: number;
  /** A stopping worker exits after this long even if its job did not release. */
  shutdownTimeoutMs: number;
}

export const WORKER_CONFIG = Symbol('WORKER_CONFIG');

const MiB = 1024 * 1024;

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new Error(`invalid ${name}=${raw}: expected an integer in [${min}, ${max}]`);
  }
  return value;
}

function url(env: NodeJS.ProcessEnv, name: string, fallback: string, protocols: string[]): string {
  const raw = env[name] || fallback;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new Error(`invalid ${name}: not a URL`);
  }
  if (!protocols.includes(parsed.protocol)) throw new Error(`invalid ${name}: expected ${protocols.join(' or ')}`);
  return raw;
}

export function loadWorkerConfig(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  const checkpointBytes = integer(env, 'CHECKPOINT_BYTES', 64 * MiB, 1, Number.MAX_SAFE_INTEGER);
  const lockDurationMs = integer(env, 'WORKER_LOCK_DURATION_MS', 60_000, 1_000, 3_600_000);
  const schema = env.DATABASE_SCHEMA || 'public';
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(schema)) throw new Error(`invalid DATABASE_SCHEMA=${schema}`);
  return {
    databaseUrl: url(env, 'DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/hashq', ['postgres:', 'postgresql:']),
    databaseSchema: schema,
    redisUrl: url(env, 'REDIS_URL', 'redis://127.0.0.1:6379', ['redis:', 'rediss:']),
    queuePrefix: env.QUEUE_PREFIX || 'hashq',
    fileRoots: env.HASHQ_FILE_ROOTS || resolve(process.cwd(), 'data'),
    chunkBytes: integer(env, 'CHUNK_BYTES', 8 * MiB, 4096, 256 * MiB),
    checkpointBytes,
    checkpointSeconds: integer(env, 'CHECKPOINT_SECONDS', 5, 1, 86_400),
    concurrency: integer(env, 'WORKER_CONCURRENCY', 1, 1, 64),
    leaseSeconds: integer(env, 'LEASE_SECONDS', 30, 1, 86_400),
    logLevel: env.LOG_LEVEL || 'info',
    lockDurationMs,
    stalledIntervalMs: integer(env, 'WORKER_STALLED_INTERVAL_MS', 30_000, 500, 3_600_000),
    maxStalledCount: integer(env, 'WORKER_MAX_STALLED_COUNT', 10, 0, 1_000),
    shutdownTimeoutMs: integer(env, 'WORKER_SHUTDOWN_TIMEOUT_MS', 9_000, 100, 60_000),
  };
}
