import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import { dirname, isAbsolute, join, resolve } from 'node:path';

/** Everything hashq reads from the environment, validated and typed. */
export interface HashqConfig {
  port: number;
  /** API: HOST, the address it listens on ('' = every interface, Node's default). */
  host: string;
  /** API: authentication (README "Keys and scopes"); HASHQ_AUTH=off is refused unless host is loopback. */
  auth: AuthSettings;
  databaseUrl: string;
  databaseSchema: string;
  redisUrl: string;
  queuePrefix: string;
  fileRoots: string[];
  chunkBytes: number;
  checkpointBytes: number;
  checkpointSeconds: number;
  workerConcurrency: number;
  /** Worker only: small jobs (one read) at once; at least workerConcurrency. */
  workerSmallJobConcurrency: number;
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
  /** API: per-key rate limits (README "Limits and hardening"). */
  rateLimit: RateLimitSettings;
  /** API: time and size bounds of the HTTP server and its request bodies. */
  http: HttpServerSettings;
  /**
   * API_LOOP_PRIORITY: `high` (default) gives the API's event-loop thread, and the pool threads it
   * starts, a nice value 5 below the process's where Linux allows it (root or CAP_SYS_NICE);
   * `realtime` does that, then puts the event loop at SCHED_FIFO 2 and the process's other threads
   * at SCHED_FIFO 1 once the API listens (Linux, with the same rights); `normal` leaves it.
   */
  apiLoopPriority: 'high' | 'realtime' | 'normal';
  /**
   * API_HEAP_RETAIN_BYTES: freed memory glibc's malloc keeps for the API instead of giving it back
   * to the kernel and faulting it in again with the next request bodies (0: glibc's own trimming).
   */
  apiHeapRetainBytes: number;
  /** API: BATCH_MANIFEST_MAX_BYTES, the largest JSON body of the batch routes (inline manifests). */
  batchManifestMaxBytes: number;
  /** API: how webhook deliveries are sent and retried (README "Webhooks"). */
  webhooks: WebhookSettings;
  /** Worker only: BullMQ's stall detection, the shutdown deadline and PostgreSQL outages. */
  worker: WorkerSettings;
  /** Worker only: the HTTP and S3 sources (@hashq/sources adds the SSRF guard of allowHosts). */
  remote: RemoteSettings;
  /** Batches (issue 14): limits and the split between grouped small items and jobs. */
  batches: BatchSettings;
  logLevel: LogLevel;
}

/** Batch settings; the README's config table explains them. */
export interface BatchSettings {
  /** BATCH_MAX_ITEMS: objects one batch may list; beyond, the batch fails BATCH_TOO_LARGE. */
  maxItems: number;
  /** BATCH_MAX_ACTIVE: batches queued or running at once in the deployment (429 beyond). */
  maxActive: number;
  /**
   * BATCH_SMALL_ITEM_BYTES: batch items below this size are hashed in groups, the others run as
   * jobs; file jobs below it that are submitted together are dispatched as job groups.
   */
  smallItemBytes: number;
  /** BATCH_GROUP_SIZE: items listed per page, and so at most per hashing group. */
  groupSize: number;
  /** Worker only: BATCH_GROUP_CONCURRENCY, groups one worker hashes at once. */
  groupConcurrency: number;
}

/** Who may reach /metrics and /docs: anyone, or only callers with an admin key. */
export type EndpointAccess = 'open' | 'key';

export interface AuthSettings {
  /** HASHQ_AUTH: false only for local use (every request is the default tenant with every scope). */
  enabled: boolean;
  /** HASHQ_METRICS_ACCESS (default: open when HOST is loopback, key otherwise). */
  metrics: EndpointAccess;
  /** HASHQ_DOCS_ACCESS (default: open when HOST is loopback, key otherwise). */
  docs: EndpointAccess;
}

/** Whether `host` (HOST) only accepts connections from this machine. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return bare === 'localhost' || bare === '::1' || (isIP(bare) === 4 && bare.startsWith('127.'));
}

/** One entry of HASHQ_STATE_KEYS (`id:base64-of-32-bytes`). */
export interface StateKey {
  id: string;
  key: Buffer;
}

/** Per-key rate limits of the API, counted in Redis so they hold across API instances. */
export interface RateLimitSettings {
  /** HASHQ_RATE_LIMIT: requests one key (or one client address without a key) may make per window; 0 = off. */
  limit: number;
  /** HASHQ_RATE_LIMIT_WINDOW_MS: the length of a window. */
  windowMs: number;
  /** HASHQ_RATE_LIMIT_TENANTS: `tenant:limit` entries; the keys of such a tenant get that limit instead. */
  tenantLimits: ReadonlyMap<string, number>;
}

/** Bounds of the API's HTTP server: a slow or silent client cannot hold a connection. */
export interface HttpServerSettings {
  /** API_HEADERS_TIMEOUT_MS: the request line and headers must arrive within this (408). */
  headersTimeoutMs: number;
  /** API_REQUEST_TIMEOUT_MS: the whole request, body included, must arrive within this (408); 0 = no bound. */
  requestTimeoutMs: number;
  /** API_KEEP_ALIVE_TIMEOUT_MS: an idle kept-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** API_JSON_MAX_BYTES: the largest JSON body of the routes without a limit of their own (413). */
  jsonMaxBytes: number;
}

/** Worker-only settings; apps/worker/README.md explains these values. */
export interface WorkerSettings {
  /** WORKER_LOCK_DURATION_MS: BullMQ lock on an active job, renewed every half of it. */
  lockDurationMs: number;
  /** WORKER_STALLED_INTERVAL_MS: how often workers look for jobs whose lock expired. */
  stalledIntervalMs: number;
  /** WORKER_MAX_STALLED_COUNT: stalls (dead workers) one job survives before BullMQ fails it. */
  maxStalledCount: number;
  /** WORKER_SHUTDOWN_TIMEOUT_MS: a stopping worker exits after this long even if its job was not handed back. */
  shutdownTimeoutMs: number;
  /**
   * PG_OUTAGE_MAX_SECONDS (in ms here): how long one heartbeat/checkpoint write is retried while
   * PostgreSQL is away (capped exponential backoff, the hash states kept in memory); 0 = no retries.
   */
  pgOutageMaxMs: number;
  /**
   * WORKER_HASH_PRIORITY: `idle` (default) runs the pool threads that hash at Linux's SCHED_IDLE,
   * so hashing yields at once to any other thread of the machine that wakes; `normal` leaves them.
   */
  hashPriority: 'idle' | 'normal';
}

/** API: webhook deliveries. */
export interface WebhookSettings {
  /**
   * WEBHOOK_RETRY_SECONDS: the waits before the second, third, ... attempt of a delivery
   * (comma-separated seconds); a delivery still refused after the last is marked failed.
   */
  retrySeconds: number[];
  /** WEBHOOK_TIMEOUT_MS: one attempt, from connecting to the end of the answer's headers. */
  timeoutMs: number;
  /** WEBHOOK_POLL_MS: how often an API instance looks for deliveries that are due. */
  pollMs: number;
}

/** Settings of the remote sources (HTTP and S3). */
export interface RemoteSettings {
  /** HTTP_CONNECT_TIMEOUT_MS: until the response headers arrive. */
  connectTimeoutMs: number;
  /** HTTP_IDLE_TIMEOUT_MS: longest silence of a connection while reading the body. */
  idleTimeoutMs: number;
  /** HTTP_MAX_REDIRECTS: redirects followed per request. */
  maxRedirects: number;
  s3: {
    /** S3_ENDPOINT, e.g. http://minio:9000 (absent: AWS for the region). */
    endpoint?: string;
    /** S3_REGION, else AWS_REGION, else us-east-1. */
    region: string;
    /** S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY, S3_SESSION_TOKEN (absent: the SDK's credential chain). */
    credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
    /** S3_FORCE_PATH_STYLE: 1, true, yes or on for MinIO/Ceph-style endpoints. */
    forcePathStyle: boolean;
    /** S3_MAX_ATTEMPTS: SDK attempts per request, with its exponential backoff. */
    maxAttempts: number;
    /** S3_PARALLEL_GETS: chunk-sized ranged GETs in flight for an object longer than a chunk (1: one stream). */
    parallelGets: number;
  };
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
    HOST: '',
    HASHQ_AUTH: 'on',
    HASHQ_METRICS_ACCESS: '',
    HASHQ_DOCS_ACCESS: '',
    DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/hashq',
    DATABASE_SCHEMA: 'public',
    REDIS_URL: 'redis://127.0.0.1:6379',
    QUEUE_PREFIX: 'hashq',
    HASHQ_FILE_ROOTS: join(root, 'data'),
    CHUNK_BYTES: String(8 * 1024 * 1024),
    CHECKPOINT_BYTES: String(64 * 1024 * 1024),
    CHECKPOINT_SECONDS: '5',
    WORKER_CONCURRENCY: '1',
    WORKER_SMALL_JOB_CONCURRENCY: '16',
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
    HASHQ_RATE_LIMIT: '6000',
    HASHQ_RATE_LIMIT_WINDOW_MS: '60000',
    HASHQ_RATE_LIMIT_TENANTS: '',
    API_HEADERS_TIMEOUT_MS: '10000',
    API_REQUEST_TIMEOUT_MS: '300000',
    API_KEEP_ALIVE_TIMEOUT_MS: '5000',
    API_JSON_MAX_BYTES: String(64 * 1024),
    API_LOOP_PRIORITY: 'high',
    API_HEAP_RETAIN_BYTES: String(64 * 1024 * 1024),
    BATCH_MANIFEST_MAX_BYTES: String(16 * 1024 * 1024),
    // the Standard Webhooks schedule after the first attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h
    WEBHOOK_RETRY_SECONDS: '5,300,1800,7200,18000,36000,36000',
    WEBHOOK_TIMEOUT_MS: '10000',
    WEBHOOK_POLL_MS: '1000',
    WORKER_LOCK_DURATION_MS: '60000',
    WORKER_STALLED_INTERVAL_MS: '30000',
    WORKER_MAX_STALLED_COUNT: '10',
    WORKER_SHUTDOWN_TIMEOUT_MS: '9000',
    WORKER_HASH_PRIORITY: 'idle',
    PG_OUTAGE_MAX_SECONDS: '300',
    HTTP_CONNECT_TIMEOUT_MS: '15000',
    HTTP_IDLE_TIMEOUT_MS: '30000',
    HTTP_MAX_REDIRECTS: '5',
    S3_ENDPOINT: '',
    S3_REGION: '',
    AWS_REGION: 'us-east-1',
    S3_ACCESS_KEY_ID: '',
    S3_SECRET_ACCESS_KEY: '',
    S3_SESSION_TOKEN: '',
    S3_FORCE_PATH_STYLE: 'false',
    S3_MAX_ATTEMPTS: '4',
    S3_PARALLEL_GETS: '1',
    BATCH_MAX_ITEMS: '10000000',
    BATCH_MAX_ACTIVE: '16',
    BATCH_SMALL_ITEM_BYTES: String(8 * 1024 * 1024),
    BATCH_GROUP_SIZE: '1024',
    BATCH_GROUP_CONCURRENCY: '2',
    LOG_LEVEL: 'info',
  };
}

export type EnvName =
  | 'PORT'
  | 'HOST'
  | 'HASHQ_AUTH'
  | 'HASHQ_METRICS_ACCESS'
  | 'HASHQ_DOCS_ACCESS'
  | 'DATABASE_URL'
  | 'DATABASE_SCHEMA'
  | 'REDIS_URL'
  | 'QUEUE_PREFIX'
  | 'HASHQ_FILE_ROOTS'
  | 'CHUNK_BYTES'
  | 'CHECKPOINT_BYTES'
  | 'CHECKPOINT_SECONDS'
  | 'WORKER_CONCURRENCY'
  | 'WORKER_SMALL_JOB_CONCURRENCY'
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
  | 'HASHQ_RATE_LIMIT'
  | 'HASHQ_RATE_LIMIT_WINDOW_MS'
  | 'HASHQ_RATE_LIMIT_TENANTS'
  | 'API_HEADERS_TIMEOUT_MS'
  | 'API_REQUEST_TIMEOUT_MS'
  | 'API_KEEP_ALIVE_TIMEOUT_MS'
  | 'API_LOOP_PRIORITY'
  | 'API_HEAP_RETAIN_BYTES'
  | 'API_JSON_MAX_BYTES'
  | 'BATCH_MANIFEST_MAX_BYTES'
  | 'WEBHOOK_RETRY_SECONDS'
  | 'WEBHOOK_TIMEOUT_MS'
  | 'WEBHOOK_POLL_MS'
  | 'WORKER_LOCK_DURATION_MS'
  | 'WORKER_STALLED_INTERVAL_MS'
  | 'WORKER_MAX_STALLED_COUNT'
  | 'WORKER_SHUTDOWN_TIMEOUT_MS'
  | 'WORKER_HASH_PRIORITY'
  | 'PG_OUTAGE_MAX_SECONDS'
  | 'HTTP_CONNECT_TIMEOUT_MS'
  | 'HTTP_IDLE_TIMEOUT_MS'
  | 'HTTP_MAX_REDIRECTS'
  | 'S3_ENDPOINT'
  | 'S3_REGION'
  | 'AWS_REGION'
  | 'S3_ACCESS_KEY_ID'
  | 'S3_SECRET_ACCESS_KEY'
  | 'S3_SESSION_TOKEN'
  | 'S3_FORCE_PATH_STYLE'
  | 'S3_MAX_ATTEMPTS'
  | 'S3_PARALLEL_GETS'
  | 'BATCH_MAX_ITEMS'
  | 'BATCH_MAX_ACTIVE'
  | 'BATCH_SMALL_ITEM_BYTES'
  | 'BATCH_GROUP_SIZE'
  | 'BATCH_GROUP_CONCURRENCY'
  | 'LOG_LEVEL';

export interface LoadOptions {
  /**
   * false only where nothing is sealed or opened (the remote sources' defaults for tools and
   * tests): HASHQ_STATE_KEYS may then be empty. The apps always require a key.
   */
  requireStateKeys?: boolean;
}

/** Reads and validates the configuration; `env` defaults to process.env. */
export function loadConfig(env: Env = process.env, options: LoadOptions = {}): HashqConfig {
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
    if (!isAbsolute(root))
      problems.push(`HASHQ_FILE_ROOTS entries must be absolute paths, got "${root}"`);
  }

  const allowHosts = raw('HASHQ_ALLOW_HOSTS')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  for (const entry of allowHosts) {
    const problem = allowHostProblem(entry);
    if (problem) problems.push(`HASHQ_ALLOW_HOSTS: ${problem}`);
  }

  const stateKeys = parseStateKeys(
    raw('HASHQ_STATE_KEYS'),
    problems,
    options.requireStateKeys ?? true,
  );

  const schema = raw('DATABASE_SCHEMA');
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    problems.push(`DATABASE_SCHEMA must be a lower-case SQL identifier, got "${schema}"`);
  }
  const queuePrefix = raw('QUEUE_PREFIX');
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(queuePrefix)) {
    problems.push(
      `QUEUE_PREFIX must be 1 to 64 characters of [A-Za-z0-9_.-], got "${queuePrefix}"`,
    );
  }
  const logLevel = raw('LOG_LEVEL') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }

  const hashPriority = raw('WORKER_HASH_PRIORITY') as WorkerSettings['hashPriority'];
  if (hashPriority !== 'idle' && hashPriority !== 'normal') {
    problems.push(`WORKER_HASH_PRIORITY must be idle or normal, got "${hashPriority}"`);
  }

  const apiLoopPriority = raw('API_LOOP_PRIORITY') as HashqConfig['apiLoopPriority'];
  if (!['high', 'realtime', 'normal'].includes(apiLoopPriority)) {
    problems.push(`API_LOOP_PRIORITY must be high, realtime or normal, got "${apiLoopPriority}"`);
  }

  const host = raw('HOST');
  if (host !== '' && host !== 'localhost' && isIP(host.replace(/^\[(.*)\]$/, '$1')) === 0) {
    problems.push(`HOST must be an IP address or localhost, got "${host}"`);
  }

  const config: HashqConfig = {
    port: int('PORT', 0, 65535),
    host,
    auth: authSettings(raw, host, problems),
    databaseUrl: url('DATABASE_URL', ['postgres:', 'postgresql:']),
    databaseSchema: schema,
    redisUrl: url('REDIS_URL', ['redis:', 'rediss:']),
    queuePrefix,
    fileRoots: fileRoots.map((root) => resolve(root)),
    chunkBytes: int('CHUNK_BYTES', 4096, 1024 * 1024 * 1024),
    checkpointBytes: int('CHECKPOINT_BYTES', 4096),
    checkpointSeconds: int('CHECKPOINT_SECONDS', 1, 86400),
    workerConcurrency: int('WORKER_CONCURRENCY', 1, 256),
    workerSmallJobConcurrency: int('WORKER_SMALL_JOB_CONCURRENCY', 1, 256),
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
    rateLimit: {
      limit: int('HASHQ_RATE_LIMIT', 0, 1_000_000_000),
      windowMs: int('HASHQ_RATE_LIMIT_WINDOW_MS', 100, 86_400_000),
      tenantLimits: parseTenantLimits(raw('HASHQ_RATE_LIMIT_TENANTS'), problems),
    },
    http: {
      headersTimeoutMs: int('API_HEADERS_TIMEOUT_MS', 100, 600_000),
      requestTimeoutMs: int('API_REQUEST_TIMEOUT_MS', 0, 86_400_000),
      keepAliveTimeoutMs: int('API_KEEP_ALIVE_TIMEOUT_MS', 100, 600_000),
      jsonMaxBytes: int('API_JSON_MAX_BYTES', 1024, 1024 ** 3),
    },
    apiLoopPriority,
    apiHeapRetainBytes: int('API_HEAP_RETAIN_BYTES', 0, 2 ** 31 - 1),
    batchManifestMaxBytes: int('BATCH_MANIFEST_MAX_BYTES', 1024, 1024 ** 3),
    webhooks: {
      retrySeconds: parseRetrySeconds(raw('WEBHOOK_RETRY_SECONDS'), problems),
      timeoutMs: int('WEBHOOK_TIMEOUT_MS', 100, 600_000),
      pollMs: int('WEBHOOK_POLL_MS', 10, 3_600_000),
    },
    worker: {
      lockDurationMs: int('WORKER_LOCK_DURATION_MS', 1_000, 3_600_000),
      stalledIntervalMs: int('WORKER_STALLED_INTERVAL_MS', 500, 3_600_000),
      maxStalledCount: int('WORKER_MAX_STALLED_COUNT', 0, 1_000),
      shutdownTimeoutMs: int('WORKER_SHUTDOWN_TIMEOUT_MS', 100, 60_000),
      pgOutageMaxMs: int('PG_OUTAGE_MAX_SECONDS', 0, 86_400) * 1000,
      hashPriority,
    },
    remote: {
      connectTimeoutMs: int('HTTP_CONNECT_TIMEOUT_MS', 100, 600_000),
      idleTimeoutMs: int('HTTP_IDLE_TIMEOUT_MS', 100, 600_000),
      maxRedirects: int('HTTP_MAX_REDIRECTS', 0, 20),
      s3: s3Settings(raw, int, problems),
    },
    batches: {
      maxItems: int('BATCH_MAX_ITEMS', 1),
      maxActive: int('BATCH_MAX_ACTIVE', 1, 100_000),
      smallItemBytes: int('BATCH_SMALL_ITEM_BYTES', 0),
      groupSize: int('BATCH_GROUP_SIZE', 1, 10_000),
      groupConcurrency: int('BATCH_GROUP_CONCURRENCY', 1, 64),
    },
    logLevel,
  };
  const { headersTimeoutMs, requestTimeoutMs } = config.http;
  if (requestTimeoutMs > 0 && requestTimeoutMs < headersTimeoutMs) {
    problems.push(
      `API_REQUEST_TIMEOUT_MS (${requestTimeoutMs}) must be 0 or at least API_HEADERS_TIMEOUT_MS (${headersTimeoutMs})`,
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/** WEBHOOK_RETRY_SECONDS: up to 20 whole numbers of seconds (0 to 7 days), comma-separated; "none": no retries. */
function parseRetrySeconds(text: string, problems: string[]): number[] {
  if (text === 'none') return [];
  const entries = text.split(',').map((item) => item.trim());
  const valid = entries.every((entry) => /^\d{1,6}$/.test(entry) && Number(entry) <= 7 * 86_400);
  if (!valid || entries.length > 20) {
    problems.push(
      `WEBHOOK_RETRY_SECONDS must be "none" or up to 20 comma-separated whole seconds (at most 604800 each), got "${text}"`,
    );
    return [];
  }
  return entries.map(Number);
}

/** HASHQ_RATE_LIMIT_TENANTS: comma-separated `tenant:limit` entries, each tenant once. */
function parseTenantLimits(text: string, problems: string[]): Map<string, number> {
  const limits = new Map<string, number>();
  for (const entry of text.split(',').map((item) => item.trim())) {
    if (entry === '') continue;
    const match = /^([A-Za-z0-9_.-]{1,128}):(\d{1,10})$/.exec(entry);
    if (!match) {
      problems.push(`HASHQ_RATE_LIMIT_TENANTS: "${entry}" is not tenant:limit (a whole number)`);
    } else if (limits.has(match[1])) {
      problems.push(`HASHQ_RATE_LIMIT_TENANTS: tenant "${match[1]}" appears twice`);
    } else {
      limits.set(match[1], Number(match[2]));
    }
  }
  return limits;
}

/**
 * HASHQ_STATE_KEYS: comma-separated `id:base64` entries, ids unique, keys exactly 32 bytes. Problems
 * name the entry by its position and id, never by its key material.
 */
function parseStateKeys(text: string, problems: string[], required: boolean): StateKey[] {
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  if (entries.length === 0 && required) {
    problems.push(
      'HASHQ_STATE_KEYS must hold at least one key `id:base64-of-32-bytes` (hash states are sealed at rest); ' +
        "make one with: node -e \"console.log('k1:' + require('crypto').randomBytes(32).toString('base64'))\"",
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
      problems.push(
        `${where}: needs the form id:base64 with an id of 1 to 32 characters [A-Za-z0-9_-]`,
      );
    } else if (keys.some((known) => known.id === id)) {
      problems.push(`${where}: key id "${id}" appears twice`);
    } else if (
      !/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) ||
      key.length !== 32 ||
      key.toString('base64') !== encoded
    ) {
      problems.push(`${where} ("${id}"): the key must be 32 bytes in base64 (44 characters)`);
    } else {
      keys.push({ id, key });
    }
  });
  return keys;
}

/**
 * HASHQ_AUTH (on|off) and the access to /metrics and /docs. Without keys anyone who reaches the
 * port is the default tenant with every scope, so off is refused unless HOST is a loopback address.
 */
function authSettings(
  raw: (name: EnvName) => string,
  host: string,
  problems: string[],
): AuthSettings {
  const loopback = isLoopbackHost(host);
  const mode = raw('HASHQ_AUTH').toLowerCase();
  if (mode !== 'on' && mode !== 'off') {
    problems.push(`HASHQ_AUTH must be on or off, got "${mode}"`);
  } else if (mode === 'off' && !loopback) {
    problems.push(
      `HASHQ_AUTH=off is for local use only: set HOST to a loopback address (127.0.0.1, ::1), got "${host || 'every interface'}"`,
    );
  }
  const access = (name: EnvName): EndpointAccess => {
    const value = raw(name).toLowerCase();
    if (value === '') return loopback ? 'open' : 'key';
    if (value !== 'open' && value !== 'key')
      problems.push(`${name} must be open or key, got "${value}"`);
    return value as EndpointAccess;
  };
  return {
    enabled: mode !== 'off',
    metrics: access('HASHQ_METRICS_ACCESS'),
    docs: access('HASHQ_DOCS_ACCESS'),
  };
}

/** The S3 part of RemoteSettings; its problems go to `problems`. */
function s3Settings(
  raw: (name: EnvName) => string,
  int: (name: EnvName, min: number, max: number) => number,
  problems: string[],
): RemoteSettings['s3'] {
  const endpoint = raw('S3_ENDPOINT') || undefined;
  if (endpoint) {
    try {
      const url = new URL(endpoint);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        problems.push(`S3_ENDPOINT must be http(s), got "${endpoint}"`);
      }
    } catch {
      problems.push(`S3_ENDPOINT is not a valid URL: "${endpoint}"`);
    }
  }
  const accessKeyId = raw('S3_ACCESS_KEY_ID');
  const secretAccessKey = raw('S3_SECRET_ACCESS_KEY');
  if (Boolean(accessKeyId) !== Boolean(secretAccessKey)) {
    problems.push('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together');
  }
  return {
    endpoint,
    region: raw('S3_REGION') || raw('AWS_REGION'),
    credentials:
      accessKeyId && secretAccessKey
        ? { accessKeyId, secretAccessKey, sessionToken: raw('S3_SESSION_TOKEN') || undefined }
        : undefined,
    forcePathStyle: /^(1|true|yes|on)$/i.test(raw('S3_FORCE_PATH_STYLE')),
    maxAttempts: int('S3_MAX_ATTEMPTS', 1, 20),
    parallelGets: int('S3_PARALLEL_GETS', 1, 64),
  };
}

const HOST_NAME =
  /^(?=.{1,253}\.?$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/i;

/** Why an entry of HASHQ_ALLOW_HOSTS is unusable (a host name, an address or a CIDR), or undefined. */
function allowHostProblem(entry: string): string | undefined {
  const slash = entry.indexOf('/');
  if (slash >= 0) {
    const address = entry.slice(0, slash).replace(/^\[(.*)\]$/, '$1');
    const prefix = entry.slice(slash + 1);
    const version = isIP(address);
    const max = version === 4 ? 32 : 128;
    if (version === 0 || !/^\d{1,3}$/.test(prefix) || Number(prefix) > max)
      return `invalid CIDR "${entry}"`;
    return undefined;
  }
  if (isIP(entry.replace(/^\[(.*)\]$/, '$1')) !== 0 || HOST_NAME.test(entry)) return undefined;
  return `"${entry}" is neither a host name, an address nor a CIDR`;
}
