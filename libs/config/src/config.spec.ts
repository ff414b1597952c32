import { randomBytes } from 'node:crypto';

import { ConfigError, loadConfig } from './config';

const KEY_A = randomBytes(32);
const KEY_B = randomBytes(32);
/** The one variable without a default. */
const KEYS = { HASHQ_STATE_KEYS: `a:${KEY_A.toString('base64')}` };

describe('loadConfig', () => {
  it('has working defaults for everything but the state keys', () => {
    const config = loadConfig(KEYS);
    expect(config).toMatchObject({
      port: 3000,
      databaseUrl: 'postgres://postgres@127.0.0.1:5432/hashq',
      databaseSchema: 'public',
      redisUrl: 'redis://127.0.0.1:6379',
      queuePrefix: 'hashq',
      chunkBytes: 8 * 1024 * 1024,
      checkpointBytes: 64 * 1024 * 1024,
      checkpointSeconds: 5,
      workerConcurrency: 1,
      leaseSeconds: 30,
      workerMetricsPort: 9464,
      reconcileSeconds: 30,
      maxJobAttempts: 20,
      sourceMaxBytes: 1024 ** 4,
      sourceMinBytesPerInterval: 1024 * 1024,
      sourceProgressIntervalMs: 30_000,
      benchmarkMaxActive: 10,
      benchmarkWorkerTimeoutSeconds: 120,
      allowHosts: [],
      stateKeys: [{ id: 'a', key: KEY_A }],
      worker: {
        lockDurationMs: 60_000,
        stalledIntervalMs: 30_000,
        maxStalledCount: 10,
        shutdownTimeoutMs: 9_000,
        pgOutageMaxMs: 300_000,
        hashPriority: 'idle',
      },
      remote: {
        connectTimeoutMs: 15_000,
        idleTimeoutMs: 30_000,
        maxRedirects: 5,
        s3: {
          endpoint: undefined,
          region: 'us-east-1',
          credentials: undefined,
          forcePathStyle: false,
          maxAttempts: 4,
        },
      },
      apiLoopPriority: 'high',
      apiHeapRetainBytes: 64 * 1024 * 1024,
      logLevel: 'info',
    });
    expect(config.fileRoots).toHaveLength(1);
    expect(config.fileRoots[0]).toMatch(/\/data$/);
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '::1',
      HASHQ_AUTH: 'off',
      HASHQ_METRICS_ACCESS: 'key',
      HASHQ_DOCS_ACCESS: 'open',
      DATABASE_URL: 'postgresql://u@db:5433/x',
      DATABASE_SCHEMA: 'hq',
      REDIS_URL: 'rediss://r:6380',
      QUEUE_PREFIX: 'p1',
      HASHQ_FILE_ROOTS: '/a, /b/c ,',
      CHUNK_BYTES: '65536',
      CHECKPOINT_BYTES: '1048576',
      CHECKPOINT_SECONDS: '2',
      WORKER_CONCURRENCY: '3',
      WORKER_SMALL_JOB_CONCURRENCY: '24',
      LEASE_SECONDS: '60',
      WORKER_METRICS_PORT: '0',
      RECONCILE_SECONDS: '5',
      MAX_JOB_ATTEMPTS: '3',
      SOURCE_MAX_BYTES: '1000000',
      SOURCE_MIN_BYTES_PER_INTERVAL: '0',
      SOURCE_PROGRESS_INTERVAL_MS: '200',
      BENCHMARK_MAX_ACTIVE: '2',
      BENCHMARK_WORKER_TIMEOUT_SECONDS: '5',
      HASHQ_ALLOW_HOSTS: ' 127.0.0.1, 10.1.0.0/16,minio.internal ,[::1],fd00::/8,',
      HASHQ_STATE_KEYS: ` new-2:${KEY_B.toString('base64')} , a:${KEY_A.toString('base64')},`,
      DIGEST_SESSION_EXPIRES_SECONDS: '600',
      DIGEST_SESSION_CLEANUP_SECONDS: '10',
      DIGEST_SESSION_MAX_BYTES: '1073741824',
      HASHQ_RATE_LIMIT: '100',
      HASHQ_RATE_LIMIT_WINDOW_MS: '1000',
      HASHQ_RATE_LIMIT_TENANTS: ' gold:1000, free:0,',
      API_HEADERS_TIMEOUT_MS: '2000',
      API_REQUEST_TIMEOUT_MS: '0',
      API_KEEP_ALIVE_TIMEOUT_MS: '700',
      API_JSON_MAX_BYTES: '2048',
      API_LOOP_PRIORITY: 'normal',
      API_HEAP_RETAIN_BYTES: '0',
      BATCH_MANIFEST_MAX_BYTES: '1048576',
      WEBHOOK_RETRY_SECONDS: ' 1, 0,604800',
      WEBHOOK_TIMEOUT_MS: '100',
      WEBHOOK_POLL_MS: '3600000',
      WORKER_LOCK_DURATION_MS: '2000',
      WORKER_STALLED_INTERVAL_MS: '1000',
      WORKER_MAX_STALLED_COUNT: '0',
      WORKER_SHUTDOWN_TIMEOUT_MS: '500',
      WORKER_HASH_PRIORITY: 'normal',
      PG_OUTAGE_MAX_SECONDS: '0',
      HTTP_CONNECT_TIMEOUT_MS: '100',
      HTTP_IDLE_TIMEOUT_MS: '600000',
      HTTP_MAX_REDIRECTS: '0',
      S3_ENDPOINT: 'http://minio:9000',
      S3_REGION: 'eu-west-3',
      AWS_REGION: 'us-west-2',
      S3_ACCESS_KEY_ID: 'key',
      S3_SECRET_ACCESS_KEY: 'secret',
      S3_SESSION_TOKEN: 'token',
      S3_FORCE_PATH_STYLE: 'yes',
      S3_MAX_ATTEMPTS: '20',
      S3_PARALLEL_GETS: '2',
      BATCH_MAX_ITEMS: '1000',
      BATCH_MAX_ACTIVE: '3',
      BATCH_SMALL_ITEM_BYTES: '0',
      BATCH_GROUP_SIZE: '64',
      BATCH_GROUP_CONCURRENCY: '4',
      LOG_LEVEL: 'debug',
    });
    expect(config).toEqual({
      port: 8080,
      host: '::1',
      auth: { enabled: false, metrics: 'key', docs: 'open' },
      databaseUrl: 'postgresql://u@db:5433/x',
      databaseSchema: 'hq',
      redisUrl: 'rediss://r:6380',
      queuePrefix: 'p1',
      fileRoots: ['/a', '/b/c'],
      chunkBytes: 65536,
      checkpointBytes: 1048576,
      checkpointSeconds: 2,
      workerConcurrency: 3,
      workerSmallJobConcurrency: 24,
      leaseSeconds: 60,
      workerMetricsPort: 0,
      reconcileSeconds: 5,
      maxJobAttempts: 3,
      sourceMaxBytes: 1_000_000,
      sourceMinBytesPerInterval: 0,
      sourceProgressIntervalMs: 200,
      benchmarkMaxActive: 2,
      benchmarkWorkerTimeoutSeconds: 5,
      allowHosts: ['127.0.0.1', '10.1.0.0/16', 'minio.internal', '[::1]', 'fd00::/8'],
      stateKeys: [
        { id: 'new-2', key: KEY_B },
        { id: 'a', key: KEY_A },
      ],
      digestSessionExpiresSeconds: 600,
      digestSessionCleanupSeconds: 10,
      digestSessionMaxBytes: 1073741824,
      rateLimit: {
        limit: 100,
        windowMs: 1000,
        tenantLimits: new Map([
          ['gold', 1000],
          ['free', 0],
        ]),
      },
      http: {
        headersTimeoutMs: 2000,
        requestTimeoutMs: 0,
        keepAliveTimeoutMs: 700,
        jsonMaxBytes: 2048,
      },
      apiLoopPriority: 'normal',
      apiHeapRetainBytes: 0,
      batchManifestMaxBytes: 1048576,
      webhooks: { retrySeconds: [1, 0, 604800], timeoutMs: 100, pollMs: 3_600_000 },
      worker: {
        lockDurationMs: 2000,
        stalledIntervalMs: 1000,
        maxStalledCount: 0,
        shutdownTimeoutMs: 500,
        pgOutageMaxMs: 0,
        hashPriority: 'normal',
      },
      remote: {
        connectTimeoutMs: 100,
        idleTimeoutMs: 600_000,
        maxRedirects: 0,
        s3: {
          endpoint: 'http://minio:9000',
          region: 'eu-west-3',
          credentials: { accessKeyId: 'key', secretAccessKey: 'secret', sessionToken: 'token' },
          forcePathStyle: true,
          maxAttempts: 20,
          parallelGets: 2,
        },
      },
      batches: {
        maxItems: 1000,
        maxActive: 3,
        smallItemBytes: 0,
        groupSize: 64,
        groupConcurrency: 4,
      },
      logLevel: 'debug',
    });
  });

  it('has API limits that hold a slow client to seconds and a JSON body to 64 KiB', () => {
    expect(loadConfig(KEYS)).toMatchObject({
      rateLimit: { limit: 6000, windowMs: 60_000, tenantLimits: new Map() },
      http: {
        headersTimeoutMs: 10_000,
        requestTimeoutMs: 300_000,
        keepAliveTimeoutMs: 5_000,
        jsonMaxBytes: 65_536,
      },
      batchManifestMaxBytes: 16 * 1024 * 1024,
    });
  });

  it.each([
    [{ HASHQ_RATE_LIMIT_TENANTS: 'gold' }, /"gold" is not tenant:limit/],
    [{ HASHQ_RATE_LIMIT_TENANTS: 'a:1,a:2' }, /tenant "a" appears twice/],
    [{ HASHQ_RATE_LIMIT_TENANTS: 'a b:1' }, /"a b:1" is not tenant:limit/],
    [{ HASHQ_RATE_LIMIT: '-1' }, /HASHQ_RATE_LIMIT must be an integer/],
    [{ HASHQ_RATE_LIMIT_WINDOW_MS: '10' }, /HASHQ_RATE_LIMIT_WINDOW_MS must be an integer/],
    [
      { API_HEADERS_TIMEOUT_MS: '20000', API_REQUEST_TIMEOUT_MS: '10000' },
      /API_REQUEST_TIMEOUT_MS \(10000\) must be 0 or at least API_HEADERS_TIMEOUT_MS/,
    ],
    [{ API_JSON_MAX_BYTES: '10' }, /API_JSON_MAX_BYTES must be an integer/],
    [{ API_HEAP_RETAIN_BYTES: '-1' }, /API_HEAP_RETAIN_BYTES must be an integer/],
    [{ API_HEAP_RETAIN_BYTES: String(2 ** 31) }, /API_HEAP_RETAIN_BYTES must be an integer/],
  ])('refuses API limits %j', (env, problem) => {
    expect(() => loadConfig({ ...KEYS, ...env })).toThrow(problem);
  });

  it('keeps authentication on, and /metrics and /docs open only on a loopback HOST, by default', () => {
    expect(loadConfig(KEYS)).toMatchObject({
      host: '',
      auth: { enabled: true, metrics: 'key', docs: 'key' },
    });
    for (const host of ['127.0.0.1', '127.8.9.1', '::1', '[::1]', 'localhost']) {
      expect(loadConfig({ ...KEYS, HOST: host }).auth).toEqual({
        enabled: true,
        metrics: 'open',
        docs: 'open',
      });
    }
  });

  it('refuses HASHQ_AUTH=off unless HOST is a loopback address', () => {
    for (const host of ['', '0.0.0.0', '::', '10.0.0.5']) {
      expect(() => loadConfig({ ...KEYS, HASHQ_AUTH: 'off', HOST: host })).toThrow(
        /HASHQ_AUTH=off is for local use only: set HOST to a loopback address/,
      );
    }
    expect(loadConfig({ ...KEYS, HASHQ_AUTH: 'off', HOST: '127.0.0.1' }).auth.enabled).toBe(false);
    expect(() => loadConfig({ ...KEYS, HASHQ_AUTH: 'maybe' })).toThrow(
      /HASHQ_AUTH must be on or off/,
    );
    expect(() => loadConfig({ ...KEYS, HASHQ_METRICS_ACCESS: 'public' })).toThrow(
      /HASHQ_METRICS_ACCESS must be open or key/,
    );
    expect(() => loadConfig({ ...KEYS, HOST: 'example.com' })).toThrow(
      /HOST must be an IP address or localhost/,
    );
  });

  it('takes the S3 region from AWS_REGION when S3_REGION is unset', () => {
    expect(loadConfig({ ...KEYS, AWS_REGION: 'ap-south-1' }).remote.s3.region).toBe('ap-south-1');
    expect(loadConfig({ ...KEYS, S3_REGION: ' ', AWS_REGION: 'ap-south-1' }).remote.s3.region).toBe(
      'ap-south-1',
    );
  });

  it('lists every problem at once', () => {
    let error: unknown;
    try {
      loadConfig({
        ...KEYS,
        PORT: 'x',
        DATABASE_URL: 'mysql://h/db',
        HASHQ_FILE_ROOTS: 'relative',
        LOG_LEVEL: 'loud',
        CHUNK_BYTES: '-1',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    for (const name of ['PORT', 'DATABASE_URL', 'HASHQ_FILE_ROOTS', 'LOG_LEVEL', 'CHUNK_BYTES']) {
      expect(problems).toContain(name);
    }
    expect((error as ConfigError).problems).toHaveLength(5);
  });

  it('refuses a metrics port outside 0..65535', () => {
    expect(() => loadConfig({ WORKER_METRICS_PORT: '65536' })).toThrow(/WORKER_METRICS_PORT/);
    expect(() => loadConfig({ WORKER_METRICS_PORT: 'abc' })).toThrow(/WORKER_METRICS_PORT/);
  });

  it('refuses a reconcile interval outside 1..86400', () => {
    expect(() => loadConfig({ RECONCILE_SECONDS: '0' })).toThrow(/RECONCILE_SECONDS/);
    expect(() => loadConfig({ RECONCILE_SECONDS: '86401' })).toThrow(/RECONCILE_SECONDS/);
    expect(() => loadConfig({ RECONCILE_SECONDS: '1.5' })).toThrow(/RECONCILE_SECONDS/);
  });

  it('refuses MAX_JOB_ATTEMPTS outside 1..100000', () => {
    for (const bad of ['0', '100001', '2.5', '-1', 'many']) {
      expect(() => loadConfig({ MAX_JOB_ATTEMPTS: bad })).toThrow(/MAX_JOB_ATTEMPTS/);
    }
    expect(loadConfig({ ...KEYS, MAX_JOB_ATTEMPTS: '1' }).maxJobAttempts).toBe(1);
  });

  it('refuses source and benchmark limits out of range', () => {
    for (const [name, bad] of [
      ['SOURCE_MAX_BYTES', '0'],
      ['SOURCE_MAX_BYTES', '1e12'],
      ['SOURCE_MIN_BYTES_PER_INTERVAL', '-1'],
      ['SOURCE_PROGRESS_INTERVAL_MS', '99'],
      ['SOURCE_PROGRESS_INTERVAL_MS', '3600001'],
      ['BENCHMARK_MAX_ACTIVE', '0'],
      ['BENCHMARK_WORKER_TIMEOUT_SECONDS', '1'],
    ]) {
      expect(() => loadConfig({ [name]: bad })).toThrow(new RegExp(name));
    }
  });

  it('refuses HASHQ_ALLOW_HOSTS entries that are no host name, address or CIDR', () => {
    for (const bad of [
      '10.0.0.0/33',
      '10.0.0.0/x',
      'fd00::/129',
      'not an address',
      'http://x',
      '300.1.2.3/8',
    ]) {
      expect(() => loadConfig({ HASHQ_ALLOW_HOSTS: `127.0.0.1,${bad}` })).toThrow(
        /HASHQ_ALLOW_HOSTS/,
      );
    }
  });

  it('stops the start without HASHQ_STATE_KEYS, saying how to make a key', () => {
    for (const env of [{}, { HASHQ_STATE_KEYS: '' }, { HASHQ_STATE_KEYS: ' , ' }]) {
      expect(() => loadConfig(env)).toThrow(
        /HASHQ_STATE_KEYS must hold at least one key .*randomBytes\(32\)/,
      );
    }
  });

  it('refuses a bad HASHQ_STATE_KEYS entry by position and id, never echoing key material', () => {
    const a = KEY_A.toString('base64');
    const cases: Array<[string, RegExp]> = [
      [a, /entry 1: needs the form id:base64/],
      [`:${a}`, /entry 1: needs the form id:base64/],
      [`a b:${a}`, /entry 1: needs the form id:base64/],
      [`${'x'.repeat(33)}:${a}`, /entry 1: needs the form id:base64/],
      [`a:${a},a:${KEY_B.toString('base64')}`, /entry 2: key id "a" appears twice/],
      [`a:${randomBytes(16).toString('base64')}`, /entry 1 \("a"\): the key must be 32 bytes/],
      [`a:${randomBytes(33).toString('base64')}`, /entry 1 \("a"\): the key must be 32 bytes/],
      [`a:${a.slice(0, -1)}`, /entry 1 \("a"\): the key must be 32 bytes/],
      [`a:${a.replace(/=$/, '')}!`, /entry 1 \("a"\): the key must be 32 bytes/],
      [`a:${KEY_A.toString('hex')}`, /entry 1 \("a"\): the key must be 32 bytes/],
    ];
    for (const [value, problem] of cases) {
      let error: unknown;
      try {
        loadConfig({ HASHQ_STATE_KEYS: value });
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).message).toMatch(problem);
      expect((error as ConfigError).message).not.toContain(a.slice(0, 16));
      expect((error as ConfigError).message).not.toContain(KEY_A.toString('hex').slice(0, 16));
    }
  });

  it('refuses digest session settings out of range', () => {
    for (const [name, bad] of [
      ['DIGEST_SESSION_EXPIRES_SECONDS', '0'],
      ['DIGEST_SESSION_EXPIRES_SECONDS', '31536001'],
      ['DIGEST_SESSION_CLEANUP_SECONDS', '0'],
      ['DIGEST_SESSION_CLEANUP_SECONDS', '1.5'],
      ['DIGEST_SESSION_MAX_BYTES', '0'],
      ['DIGEST_SESSION_MAX_BYTES', '1e9'],
    ]) {
      expect(() => loadConfig({ ...KEYS, [name]: bad })).toThrow(new RegExp(name));
    }
    expect(loadConfig(KEYS)).toMatchObject({
      digestSessionExpiresSeconds: 86400,
      digestSessionCleanupSeconds: 60,
      digestSessionMaxBytes: 2 ** 40,
    });
  });

  it('reads webhook settings, and refuses them out of range', () => {
    expect(loadConfig(KEYS).webhooks).toEqual({
      retrySeconds: [5, 300, 1800, 7200, 18000, 36000, 36000],
      timeoutMs: 10_000,
      pollMs: 1000,
    });
    expect(loadConfig({ ...KEYS, WEBHOOK_RETRY_SECONDS: 'none' }).webhooks.retrySeconds).toEqual(
      [],
    );
    for (const [name, bad] of [
      ['WEBHOOK_RETRY_SECONDS', '5,,30'],
      ['WEBHOOK_RETRY_SECONDS', '1.5'],
      ['WEBHOOK_RETRY_SECONDS', '604801'],
      ['WEBHOOK_RETRY_SECONDS', '-1'],
      ['WEBHOOK_RETRY_SECONDS', Array(21).fill('1').join(',')],
      ['WEBHOOK_TIMEOUT_MS', '99'],
      ['WEBHOOK_POLL_MS', '9'],
    ]) {
      expect(() => loadConfig({ ...KEYS, [name]: bad })).toThrow(new RegExp(name));
    }
  });

  it('refuses worker settings out of range', () => {
    for (const [name, bad] of [
      ['WORKER_LOCK_DURATION_MS', '999'],
      ['WORKER_LOCK_DURATION_MS', '3600001'],
      ['WORKER_STALLED_INTERVAL_MS', '499'],
      ['WORKER_MAX_STALLED_COUNT', '1001'],
      ['WORKER_SHUTDOWN_TIMEOUT_MS', '99'],
      ['WORKER_SHUTDOWN_TIMEOUT_MS', '60001'],
      ['PG_OUTAGE_MAX_SECONDS', '86401'],
      ['PG_OUTAGE_MAX_SECONDS', '-1'],
      ['WORKER_SMALL_JOB_CONCURRENCY', '0'],
      ['WORKER_SMALL_JOB_CONCURRENCY', '257'],
    ]) {
      expect(() => loadConfig({ [name]: bad })).toThrow(new RegExp(`${name} must be an integer`));
    }
    for (const bad of ['IDLE', 'low']) {
      expect(() => loadConfig({ ...KEYS, WORKER_HASH_PRIORITY: bad })).toThrow(
        /WORKER_HASH_PRIORITY must be idle or normal/,
      );
    }
    for (const bad of ['HIGH', 'idle', '-10', 'REALTIME', 'fifo']) {
      expect(() => loadConfig({ ...KEYS, API_LOOP_PRIORITY: bad })).toThrow(
        /API_LOOP_PRIORITY must be high, realtime or normal/,
      );
    }
    expect(loadConfig({ ...KEYS, API_LOOP_PRIORITY: 'realtime' }).apiLoopPriority).toBe('realtime');
  });

  it('refuses remote-source settings and lists them with the others', () => {
    let error: unknown;
    try {
      loadConfig({
        ...KEYS,
        PORT: 'x',
        HTTP_MAX_REDIRECTS: 'x',
        S3_ENDPOINT: 'ftp://a',
        S3_ACCESS_KEY_ID: 'a',
        S3_MAX_ATTEMPTS: '0',
        S3_PARALLEL_GETS: '0',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      'PORT must be an integer between 0 and 65535, got "x"',
      'HTTP_MAX_REDIRECTS must be an integer between 0 and 20, got "x"',
      'S3_ENDPOINT must be http(s), got "ftp://a"',
      'S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together',
      'S3_MAX_ATTEMPTS must be an integer between 1 and 20, got "0"',
      'S3_PARALLEL_GETS must be an integer between 1 and 64, got "0"',
    ]);
    expect(() => loadConfig({ S3_ENDPOINT: 'not a url' })).toThrow(
      /S3_ENDPOINT is not a valid URL/,
    );
    for (const bad of ['HTTP_CONNECT_TIMEOUT_MS', 'HTTP_IDLE_TIMEOUT_MS']) {
      expect(() => loadConfig({ [bad]: '99' })).toThrow(new RegExp(bad));
      expect(() => loadConfig({ [bad]: '600001' })).toThrow(new RegExp(bad));
    }
  });
});
