import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import { dirname, isAbsolute, join, resolve } from 'node:path';

/** Everything hashq reads from the environment, validated and typed. */
export interface HashqConfig {
  port: number;
  databaseUrl: string;
  databaseSchema: string;
  redisUrl: string;
  queuePrefix: string;
  fileRoots: string[];
  chunkBytes: number;
  checkpointBytes: number;
  checkpointSeconds: number;
  workerConcurrency: number;
  leaseSeconds: number;
  /** Worker only: port of its Prometheus endpoint (GET /metrics); 0 disables it. */
  workerMetricsPort: number;
  /** Seconds between two rounds of the queue reconciler (API and worker; one round also at start). */
  reconcileSeconds: number;
  /**
   * MAX_JOB_ATTEMPTS: leases one job may take (jobs.attempts: each start or resume by a worker).
   * A job that used them all ends 'failed' with ATTEMPTS_EXHAUSTED instead of running again.
   */
  maxJobAttempts: number;
  /** Worker only: SOURCE_MAX_BYTES, the largest object a job may hash (SOURCE_TOO_LARGE beyond). */
  sourceMaxBytes: number;
  /**
   * Worker only: SOURCE_MIN_BYTES_PER_INTERVAL bytes a source must deliver per SOURCE_PROGRESS_INTERVAL_MS
   * spent waiting on it, or the job fails SOURCE_TOO_SLOW (0 disables the check).
   */
  sourceMinBytesPerInterval: number;
  sourceProgressIntervalMs: number;
  /** API: BENCHMARK_MAX_ACTIVE, benchmark runs queued or running at once (BENCHMARK_LIMIT_REACHED beyond). */
  benchmarkMaxActive: number;
  /**
   * BENCHMARK_WORKER_TIMEOUT_SECONDS: an architecture none of whose workers reported for this long has
   * no worker: runs for it are refused and its queued runs fail (BENCHMARK_NO_WORKER).
   */
  benchmarkWorkerTimeoutSeconds: number;
  /** HASHQ_ALLOW_HOSTS: host names, addresses and CIDRs exempt from the SSRF guard (empty: none). */
  allowHosts: string[];
  /**
   * HASHQ_STATE_KEYS: the AES-256 keys that seal hash states at rest (required, no default). The
   * first seals new states; all of them open stored ones. Secret: never log them.
   */
  stateKeys: StateKey[];
  /** API: a digest session idle this long (no committed PATCH) expires (410), seconds. */
  digestSessionExpiresSeconds: number;
  /** API: seconds between two sweeps that delete the hash states of expired digest sessions. */
  digestSessionCleanupSeconds: number;
  /** API: the largest digest session, bytes (tus `Tus-Max-Size`). */
  digestSessionMaxBytes: number;
  logLevel: LogLevel;
}

/** One entry of HASHQ_STATE_KEYS (`id:base64-of-32-bytes`). */
export interface StateKey {
  id: string;
  key: Buffer;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type Env = Record<string, string | undefined>;

/** Thrown at start when the environment is unusable; lists every problem at once. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

/**
 * The repository root: the nearest folder above the working directory that holds nest-cli.json
 * (npm scripts run there); the working directory itself when there is none (e.g. in a container).
 */
export function projectRoot(start = process.cwd()): string {
  for (let dir = resolve(start); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'nest-cli.json'))) return dir;
    if (dirname(dir) === dir) return resolve(start);
  }
}

/** Default values; they work on a developer machine with local PostgreSQL and Redis. */
export function defaultEnv(root = projectRoot()): Required<Record<EnvName, string>> {
  return {
    PORT: '3000',
    DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/hashq',
    DATABASE_SCHEMA: 'public',
    REDIS_URL: 'redis://127.0.0.1:6379',
    QUEUE_PREFIX: 'hashq',
    HASHQ_FILE_ROOTS: join(root, 'data'),
    CHUNK_BYTES: String(8 * 1024 * 1024),
    CHECKPOINT_BYTES: String(64 * 1024 * 1024),
    CHECKPOINT_SECONDS: '5',
    WORKER_CONCURRENCY: '1',
    LEASE_SECONDS: '30',
    WORKER_METRICS_PORT: '9464',
    RECONCILE_SECONDS: '30',
    MAX_JOB_ATTEMPTS: '20',
    SOURCE_MAX_BYTES: String(1024 ** 4),
    SOURCE_MIN_BYTES_PER_INTERVAL: String(1024 * 1024),
    SOURCE_PROGRESS_INTERVAL_MS: '30000',
    BENCHMARK_MAX_ACTIVE: '10',
    BENCHMARK_WORKER_TIMEOUT_SECONDS: '120',
    HASHQ_ALLOW_HOSTS: '',
    HASHQ_STATE_KEYS: '',
    DIGEST_SESSION_EXPIRES_SECONDS: '86400',
    DIGEST_SESSION_CLEANUP_SECONDS: '60',
    DIGEST_SESSION_MAX_BYTES: String(2 ** 40),
    LOG_LEVEL: 'info',
  };
}

export type EnvName =
  | 'PORT'
  | 'DATABASE_URL'
  | 'DATABASE_SCHEMA'
  | 'REDIS_URL'
  | 'QUEUE_PREFIX'
  | 'HASHQ_FILE_ROOTS'
  | 'CHUNK_BYTES'
  | 'CHECKPOINT_BYTES'
  | 'CHECKPOINT_SECONDS'
  | 'WORKER_CONCURRENCY'
  | 'LEASE_SECONDS'
  | 'WORKER_METRICS_PORT'
  | 'RECONCILE_SECONDS'
  | 'MAX_JOB_ATTEMPTS'
  | 'SOURCE_MAX_BYTES'
  | 'SOURCE_MIN_BYTES_PER_INTERVAL'
  | 'SOURCE_PROGRESS_INTERVAL_MS'
  | 'BENCHMARK_MAX_ACTIVE'
  | 'BENCHMARK_WORKER_TIMEOUT_SECONDS'
  | 'HASHQ_ALLOW_HOSTS'
  | 'HASHQ_STATE_KEYS'
  | 'DIGEST_SESSION_EXPIRES_SECONDS'
  | 'DIGEST_SESSION_CLEANUP_SECONDS'
  | 'DIGEST_SESSION_MAX_BYTES'
  | 'LOG_LEVEL';

/** Reads and validates the configuration; `env` defaults to process.env. */
export function loadConfig(env: Env = process.env): HashqConfig {
  const defaults = defaultEnv();
  const problems: string[] = [];
  const raw = (name: EnvName): string => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? defaults[name] : value;
  };
  const int = (name: EnvName, min: number, max = Number.MAX_SAFE_INTEGER): number => {
    const text = raw(name);
    const value = Number(text);
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < min || value > max) {
      problems.push(`${name} must be an integer between ${min} and ${max}, got "${text}"`);
    }
    return value;
  };
  const url = (name: EnvName, protocols: string[]): string => {
    const text = raw(name);
    try {
      const parsed = new URL(text);
      if (!protocols.includes(parsed.protocol)) {
        problems.push(`${name} must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
      }
    } catch {
      problems.push(`${name} is not a valid URL: "${text}"`);
    }
    return text;
  };

  const fileRoots = raw('HASHQ_FILE_ROOTS')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  if (fileRoots.length === 0) problems.push('HASHQ_FILE_ROOTS must list at least one folder');
  for (const root of fileRoots) {
    if (!isAbsolute(root)) problems.push(`HASHQ_FILE_ROOTS entries must be absolute paths, got "${root}"`);
  }

  const allowHosts = raw('HASHQ_ALLOW_HOSTS')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  for (const entry of allowHosts) {
    const problem = allowHostProblem(entry);
    if (problem) problems.push(`HASHQ_ALLOW_HOSTS: ${problem}`);
  }

  const stateKeys = parseStateKeys(raw('HASHQ_STATE_KEYS'), problems);

  const schema = raw('DATABASE_SCHEMA');
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    problems.push(`DATABASE_SCHEMA must be a lower-case SQL identifier, got "${schema}"`);
  }
  const queuePrefix = raw('QUEUE_PREFIX');
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(queuePrefix)) {
    problems.push(`QUEUE_PREFIX must be 1 to 64 characters of [A-Za-z0-9_.-], got "${queuePrefix}"`);
  }
  const logLevel = raw('LOG_LEVEL') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }

  const config: HashqConfig = {
    port: int('PORT', 0, 65535),
    databaseUrl: url('DATABASE_URL', ['postgres:', 'postgresql:']),
    databaseSchema: schema,
    redisUrl: url('REDIS_URL', ['redis:', 'rediss:']),
    queuePrefix,
    fileRoots: fileRoots.map((root) => resolve(root)),
    chunkBytes: int('CHUNK_BYTES', 4096, 1024 * 1024 * 1024),
    checkpointBytes: int('CHECKPOINT_BYTES', 4096),
    checkpointSeconds: int('CHECKPOINT_SECONDS', 1, 86400),
    workerConcurrency: int('WORKER_CONCURRENCY', 1, 256),
    leaseSeconds: int('LEASE_SECONDS', 5, 86400),
    workerMetricsPort: int('WORKER_METRICS_PORT', 0, 65535),
    reconcileSeconds: int('RECONCILE_SECONDS', 1, 86400),
    maxJobAttempts: int('MAX_JOB_ATTEMPTS', 1, 100_000),
    sourceMaxBytes: int('SOURCE_MAX_BYTES', 1),
    sourceMinBytesPerInterval: int('SOURCE_MIN_BYTES_PER_INTERVAL', 0),
    sourceProgressIntervalMs: int('SOURCE_PROGRESS_INTERVAL_MS', 100, 3_600_000),
    benchmarkMaxActive: int('BENCHMARK_MAX_ACTIVE', 1, 10_000),
    benchmarkWorkerTimeoutSeconds: int('BENCHMARK_WORKER_TIMEOUT_SECONDS', 2, 86_400),
    allowHosts,
    stateKeys,
    digestSessionExpiresSeconds: int('DIGEST_SESSION_EXPIRES_SECONDS', 1, 365 * 86400),
    digestSessionCleanupSeconds: int('DIGEST_SESSION_CLEANUP_SECONDS', 1, 86400),
    digestSessionMaxBytes: int('DIGEST_SESSION_MAX_BYTES', 1),
    logLevel,
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/**
 * HASHQ_STATE_KEYS: comma-separated `id:base64` entries, ids unique, keys exactly 32 bytes. Problems
 * name the entry by its position and id, never by its key material.
 */
function parseStateKeys(text: string, problems: string[]): StateKey[] {
  const entries = text.split(',').map((entry) => entry.trim()).filter((entry) => entry.length > 0);
  if (entries.length === 0) {
    problems.push(
      'HASHQ_STATE_KEYS must hold at least one key `id:base64-of-32-bytes` (hash states are sealed at rest); ' +
        'make one with: node -e "console.log(\'k1:\' + require(\'crypto\').randomBytes(32).toString(\'base64\'))"',
    );
  }
  const keys: StateKey[] = [];
  entries.forEach((entry, index) => {
    const colon = entry.indexOf(':');
    const id = colon < 0 ? '' : entry.slice(0, colon).trim();
    const encoded = colon < 0 ? '' : entry.slice(colon + 1).trim();
    const where = `HASHQ_STATE_KEYS entry ${index + 1}`;
    const key = Buffer.from(encoded, 'base64');
    if (!/^[A-Za-z0-9_-]{1,32}$/.test(id)) {
      problems.push(`${where}: needs the form id:base64 with an id of 1 to 32 characters [A-Za-z0-9_-]`);
    } else if (keys.some((known) => known.id === id)) {
      problems.push(`${where}: key id "${id}" appears twice`);
    } else if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || key.length !== 32 || key.toString('base64') !== encoded) {
      problems.push(`${where} ("${id}"): the key must be 32 bytes in base64 (44 characters)`);
    } else {
      keys.push({ id, key });
    }
  });
  return keys;
}

const HOST_NAME = /^(?=.{1,253}\.?$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/i;

/** Why an entry of HASHQ_ALLOW_HOSTS is unusable (a host name, an address or a CIDR), or undefined. */
function allowHostProblem(entry: string): string | undefined {
  const slash = entry.indexOf('/');
  if (slash >= 0) {
    const address = entry.slice(0, slash).replace(/^\[(.*)\]$/, '$1');
    const prefix = entry.slice(slash + 1);
    const version = isIP(address);
    const max = version === 4 ? 32 : 128;
    if (version === 0 || !/^\d{1,3}$/.test(prefix) || Number(prefix) > max) return `invalid CIDR "${entry}"`;
    return undefined;
  }
  if (isIP(entry.replace(/^\[(.*)\]$/, '$1')) !== 0 || HOST_NAME.test(entry)) return undefined;
  return `"${entry}" is neither a host name, an address nor a CIDR`;
}
