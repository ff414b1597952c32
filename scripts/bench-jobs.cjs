#!/usr/bin/env node
// `npm run bench:jobs`: the per-job overhead of hashq, end to end. BENCH_JOBS small files (default
// 2,000 of 4 KiB) are submitted through the API (POST /v1/jobs) by BENCH_CLIENTS concurrent
// clients (default 16) and hashed by one worker; beside it, in the same run and on the same Redis,
// raw BullMQ with a no-op processor (its own prefix, concurrency 1 and 16) gets the same number of
// jobs from the same number of concurrent producers: the ceiling that dispatch alone allows.
// Prints accepted and completed jobs/s, p50/p99 job latency (createdAt → finishedAt, server
// times), peak RSS of the worker and the API, CPU per job, PostgreSQL transactions per job, and
// the ratios to the peers. A timing script, not a test: it asserts only that every digest equals
// Node's crypto.
//
// The API and worker get their own database (hashq_benchjobs_<random>, dropped at the end) and
// BullMQ prefix; the files stay in .data/bench-jobs/<bytes>/ for reuse.
//
// Environment:
//   BENCH_JOBS         jobs (default 2000)         BENCH_CLIENTS  concurrent clients (default 16)
//   BENCH_FILE_BYTES   file size (default 4096)    BENCH_WORKERS  worker processes (default 1)
//   BENCH_PEERS        0 skips the raw BullMQ runs
//   BENCH_WARM_UP_JOBS untimed jobs first; default: rounds of 2,000 until the CPU per job of the
//                      API and worker falls by less than 5 % from one round to the next (V8's
//                      optimizing compiler is still at work after thousands of requests; a
//                      running service has paid that), at most 10 rounds. A number: that many.
//   WORKER_CONCURRENCY and the other worker settings are passed through (default: the worker's own)
//   BENCH_WORKER_NODE_ARGS / BENCH_API_NODE_ARGS  node options, e.g. "--cpu-prof --cpu-prof-dir=/tmp/p"
//   DATABASE_URL / REDIS_URL  servers to use (the database part of DATABASE_URL is replaced)
const { spawn } = require('node:child_process');
const { createHash, randomBytes } = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');

const {
  APP_BUILD_FILES,
  ensureBuilt,
  freePort,
  startProcess,
  stopProcess,
  waitHealthy,
  resetPeakRss,
  peakRssMiB,
  cpuSeconds,
  databaseUrlFor,
  deleteKeys: deleteKeysOn,
  BENCH_API_ENV,
  API_NODE_ARGS,
} = require('./bench-e2e/setup.cjs');
const { printTable } = require('./bench-e2e/table.cjs');

const ROOT = path.join(__dirname, '..');
const JOBS = Number(process.env.BENCH_JOBS ?? 2000);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 16);
const FILE_BYTES = Number(process.env.BENCH_FILE_BYTES ?? 4096);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 1);
const PEERS = process.env.BENCH_PEERS !== '0';
const FIXED_WARM_UP = process.env.BENCH_WARM_UP_JOBS;
const WARM_UP_ROUND = 2000;
const WARM_UP_MAX_ROUNDS = 10;
const SERVER_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/hashq';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const POLL_MS = 50;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const nodeArgs = (name) => (process.env[name] ?? '').split(' ').filter(Boolean);

/** The files (created once, kept) and their sha256 by Node's crypto. */
function prepareFiles(dir, count) {
  fs.mkdirSync(dir, { recursive: true });
  const files = [];
  for (let i = 0; i < count; i++) {
    const file = path.join(dir, `f-${String(i).padStart(6, '0')}.bin`);
    if (!fs.existsSync(file) || fs.statSync(file).size !== FILE_BYTES)
      fs.writeFileSync(file, randomBytes(FILE_BYTES));
    files.push({ file, sha256: createHash('sha256').update(fs.readFileSync(file)).digest('hex') });
  }
  return files;
}

/**
 * One POST on a keep-alive socket. node:http rather than fetch: this load generator shares the 2
 * cores with what it measures, and fetch costs it ~0.9 ms of CPU per request here, http ~0.25.
 */
function post(agent, port, path, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const parts = [];
        res.on('data', (part) => parts.push(part));
        res.on('end', () =>
          resolve({ status: res.statusCode, text: Buffer.concat(parts).toString() }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const microseconds = ({ user, system }) => user + system;
const percentile = (sorted, p) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/**
 * `clients` concurrent loops share one counter over `count` submissions; returns when the last one
 * was accepted.
 */
async function submitAll(count, clients, submit) {
  let next = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < count) await submit(next++);
    }),
  );
}

/** The hashq run: API + worker(s) on an own database, files submitted as POST /v1/jobs. */
async function runHashq(id, files, admin, Client) {
  const { runMigrations } = require(path.join(ROOT, 'dist/libs/database/src/migrate.js'));
  const database = `${id}_hashq`;
  const databaseUrl = databaseUrlFor(SERVER_URL, database);
  await admin.query(`CREATE DATABASE ${database}`);
  const run = { database, prefix: database, processes: [] };
  try {
    await runMigrations({ databaseUrl, databaseSchema: 'public' });
    const xactBase = await xactCount(admin, database);
    const port = await freePort();
    const env = {
      ...process.env,
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      DATABASE_SCHEMA: 'public',
      QUEUE_PREFIX: database,
      REDIS_URL,
      HASHQ_FILE_ROOTS: path.dirname(files[0].file),
      HASHQ_STATE_KEYS: `bench:${randomBytes(32).toString('base64')}`,
      ...BENCH_API_ENV,
      WORKER_METRICS_PORT: '0',
    };
    const api = startProcess('api', 'dist/apps/api/main.js', env, {
      nodeArgs: [...API_NODE_ARGS, ...nodeArgs('BENCH_API_NODE_ARGS')],
    });
    const workers = Array.from({ length: WORKERS }, (_, i) =>
      startProcess(`worker ${i + 1}`, 'dist/apps/worker/main.js', env, {
        nodeArgs: nodeArgs('BENCH_WORKER_NODE_ARGS'),
      }),
    );
    run.processes.push(api, ...workers);
    const apiUrl = `http://127.0.0.1:${port}`;
    await waitHealthy(apiUrl);
    const db = new Client({ connectionString: databaseUrl });
    db.on('error', () => undefined); // the DROP ... WITH (FORCE) of a failed run ends it
    await db.connect();
    let polls = 0;
    const finishedCount = async () => {
      polls++;
      const { rows } = await db.query(
        `SELECT count(*)::int AS n FROM jobs WHERE status IN ('succeeded', 'failed', 'canceled')`,
      );
      return rows[0].n;
    };
    const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
    const submit = async (file) => {
      const body = JSON.stringify({ source: { type: 'file', path: file }, algorithms: ['sha256'] });
      const res = await post(agent, port, '/v1/jobs', body);
      if (res.status !== 202) throw new Error(`submit: ${res.status} ${res.text}`);
    };
    const waitFinished = async (count) => {
      while ((await finishedCount()) < count) await sleep(POLL_MS);
    };

    // Warm-up (JIT, connections, pools): not timed.
    let warmedUp = 0;
    const warmUp = async (count) => {
      const before = cpuSeconds([api.pid, ...workers.map((w) => w.pid)]);
      await submitAll(count, CLIENTS, (i) => submit(files[(warmedUp + i) % files.length].file));
      warmedUp += count;
      await waitFinished(warmedUp);
      return (cpuSeconds([api.pid, ...workers.map((w) => w.pid)]) - before) / count;
    };
    const warmUpRounds = [];
    if (FIXED_WARM_UP !== undefined) {
      await warmUp(Number(FIXED_WARM_UP));
    } else {
      let last = await warmUp(WARM_UP_ROUND);
      warmUpRounds.push(last);
      while (warmUpRounds.length < WARM_UP_MAX_ROUNDS) {
        const next = await warmUp(WARM_UP_ROUND);
        warmUpRounds.push(next);
        if (next > last * 0.95) break;
        last = next;
      }
    }

    const pgPids = (
      await admin.query('SELECT pid FROM pg_stat_activity WHERE datname = $1', [database])
    ).rows.map((row) => row.pid);
    for (const child of run.processes) resetPeakRss(child.pid);
    const cpuBefore = {
      worker: cpuSeconds(workers.map((w) => w.pid)),
      api: cpuSeconds([api.pid]),
      pg: cpuSeconds(pgPids),
      client: process.cpuUsage(),
    };
    const started = performance.now();
    let acceptedAt = 0;
    const submitting = submitAll(JOBS, CLIENTS, (i) => submit(files[i].file)).then(() => {
      acceptedAt = performance.now();
    });
    await waitFinished(warmedUp + JOBS);
    const completedAt = performance.now();
    await submitting;
    const newPgPids = (
      await admin.query('SELECT pid FROM pg_stat_activity WHERE datname = $1', [database])
    ).rows
      .map((row) => row.pid)
      .filter((pid) => !pgPids.includes(pid));
    const cpu = {
      worker: cpuSeconds(workers.map((w) => w.pid)) - cpuBefore.worker,
      api: cpuSeconds([api.pid]) - cpuBefore.api,
      pg: cpuSeconds(pgPids) - cpuBefore.pg + cpuSeconds(newPgPids),
      client: microseconds(process.cpuUsage(cpuBefore.client)) / 1e6,
    };
    const rss = {
      worker: Math.max(...workers.map((w) => peakRssMiB(w.pid))),
      api: peakRssMiB(api.pid),
    };

    const { rows } = await db.query(
      `SELECT source->>'path' AS path, status, digests->'sha256'->>'hex' AS hex,
              extract(epoch FROM finished_at - created_at) * 1000 AS ms
         FROM jobs ORDER BY created_at OFFSET $1`,
      [warmedUp],
    );
    await db.end();
    const expected = new Map(files.map((f) => [fs.realpathSync(f.file), f.sha256]));
    const wrong = rows.filter(
      (row) => row.status !== 'succeeded' || expected.get(row.path) !== row.hex,
    );
    if (rows.length !== JOBS || wrong.length > 0)
      throw new Error(
        `${rows.length} jobs, ${wrong.length} not succeeded with Node's sha256: ${JSON.stringify(wrong.slice(0, 3))}`,
      );
    const latencies = rows.map((row) => Number(row.ms)).sort((a, b) => a - b);

    // Stopped backends flush their statistics: the transaction count is then complete.
    await Promise.all(run.processes.map(stopProcess));
    await sleep(500);
    const xacts = (await xactCount(admin, database)) - xactBase - polls - 1; // minus this script's own queries
    return {
      accepted: JOBS / ((acceptedAt - started) / 1000),
      completed: JOBS / ((completedAt - started) / 1000),
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      rss,
      cpu,
      xactsPerJob: xacts / (JOBS + warmedUp),
      warmedUp,
      warmUpRounds,
    };
  } finally {
    await Promise.all(run.processes.map(stopProcess));
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await deleteKeys(run.prefix);
  }
}

/** Committed + rolled back transactions of a database (what its backends have flushed). */
async function xactCount(admin, database) {
  const { rows } = await admin.query(
    'SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = $1',
    [database],
  );
  return Number(rows[0]?.n ?? 0);
}

/** Raw BullMQ: the same count of jobs from the same count of concurrent producers, no-op worker. */
async function runBullmq(prefix, concurrency) {
  const { Queue } = require('bullmq');
  const { Redis } = require('ioredis');
  const child = spawn(
    process.execPath,
    [
      path.join(__dirname, 'bench-jobs', 'bullmq-noop.cjs'),
      REDIS_URL,
      prefix,
      String(concurrency),
      String(JOBS),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines = readline.createInterface({ input: child.stdout });
  const seen = (word) =>
    new Promise((resolve) =>
      lines.on('line', (line) => line === word && resolve(performance.now())),
    );
  const ready = seen('ready');
  const done = seen('done');
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const queue = new Queue('noop', { connection, prefix });
  try {
    await ready;
    resetPeakRss(child.pid);
    const started = performance.now();
    await submitAll(JOBS, CLIENTS, (i) =>
      // the options hashq gives its jobs (libs/jobs/src/queue.ts hashJobOptions)
      queue.add(
        'noop',
        { jobId: `job-${i}` },
        {
          jobId: `job-${i}`,
          attempts: 8,
          backoff: { type: 'exponential', delay: 1000 },
          removeOnComplete: { count: 1000 },
          removeOnFail: { count: 5000 },
        },
      ),
    );
    const acceptedAt = performance.now();
    const completedAt = await done;
    return {
      accepted: JOBS / ((acceptedAt - started) / 1000),
      completed: JOBS / ((completedAt - started) / 1000),
      rss: { worker: peakRssMiB(child.pid) },
    };
  } finally {
    await queue.close();
    connection.disconnect();
    await stopProcess(child);
    await deleteKeys(prefix);
  }
}

async function deleteKeys(prefix) {
  const { Redis } = require('ioredis');
  const redis = new Redis(REDIS_URL);
  await deleteKeysOn(redis, prefix);
  redis.disconnect();
}

async function main() {
  ensureBuilt(APP_BUILD_FILES);
  const { Client } = require('pg');
  const id = `hashq_benchjobs_${randomBytes(4).toString('hex')}`;
  const files = prepareFiles(path.join(ROOT, '.data', 'bench-jobs', String(FILE_BYTES)), JOBS);
  const admin = new Client({
    connectionString: databaseUrlFor(SERVER_URL, 'postgres'),
  });
  await admin.connect();
  const load = () =>
    os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
  const loadBefore = load();
  try {
    const peers = PEERS
      ? [
          ['BullMQ no-op, concurrency 1', await runBullmq(`${id}_bull1`, 1)],
          ['BullMQ no-op, concurrency 16', await runBullmq(`${id}_bull16`, 16)],
        ]
      : [];
    const hashq = await runHashq(id, files, admin, Client);
    const concurrency = process.env.WORKER_CONCURRENCY ?? 'default';
    console.log(
      `\nhashq jobs bench: ${JOBS} jobs of ${FILE_BYTES} B (sha256), ${CLIENTS} clients, ${WORKERS} worker(s), ` +
        `WORKER_CONCURRENCY ${concurrency}; node ${process.version}, ${os.cpus().length} x ${os.cpus()[0]?.model ?? '?'}, ` +
        `load ${loadBefore} → ${load()}`,
    );
    const fmt = (x) => (x === undefined ? '-' : x.toFixed(0));
    const ratio = (peer) => (peer ? `${(hashq.completed / peer.completed).toFixed(2)}x` : '-');
    printTable(
      [
        'run',
        'accepted/s',
        'completed/s',
        'p50 ms',
        'p99 ms',
        'worker RSS',
        'API RSS',
        'hashq ÷ this',
      ],
      [
        [
          'hashq: API + worker, file jobs',
          fmt(hashq.accepted),
          fmt(hashq.completed),
          fmt(hashq.p50),
          fmt(hashq.p99),
          `${fmt(hashq.rss.worker)} MiB`,
          `${fmt(hashq.rss.api)} MiB`,
          '',
        ],
        ...peers.map(([name, peer]) => [
          name,
          fmt(peer.accepted),
          fmt(peer.completed),
          '-',
          '-',
          `${fmt(peer.rss.worker)} MiB`,
          '-',
          ratio(peer),
        ]),
      ],
    );
    const perJob = (seconds) => `${((seconds * 1000) / JOBS).toFixed(2)} ms`;
    console.log(
      `  CPU per job: worker ${perJob(hashq.cpu.worker)}, API ${perJob(hashq.cpu.api)}, PostgreSQL ${perJob(hashq.cpu.pg)}, ` +
        `this client ${perJob(hashq.cpu.client)}; ` +
        `PostgreSQL transactions per job: ${hashq.xactsPerJob.toFixed(1)} (API + worker, start-up included)`,
    );
    const rounds = hashq.warmUpRounds.map((cpu) => (cpu * 1000).toFixed(2)).join(', ');
    console.log(
      `  warm-up: ${hashq.warmedUp} untimed jobs first` +
        (rounds
          ? ` (API + worker CPU per job in its rounds of ${WARM_UP_ROUND}: ${rounds} ms)`
          : ''),
    );
    console.log(
      `  accepted/s: until the last submit was answered; completed/s: until the last job finished (both from the\n` +
        `  first submit); latency: the job's createdAt → finishedAt; RSS: peak during the timed run. Digests: all\n` +
        `  ${JOBS} equal Node's crypto sha256.`,
    );
  } finally {
    await admin.end();
  }
}

main().catch((err) => {
  console.error(`[bench] ${err.stack ?? err}`);
  process.exit(1);
});
