#!/usr/bin/env node
// `npm run bench:batch`: batches end to end through the API and a worker (POST /v1/batches →
// listing → groups hashed, big items as jobs → status 'succeeded'), sha256, each next to its peers
// on the same data in the same round. Two cases:
//   dir: a directory of N files of 4 KiB (warm page cache) beside `rclone hashsum SHA256 <dir>`
//        (Debian's rclone, default checkers: the bar, ≥ 1.0×) and
//        `find <dir> -type f -print0 | xargs -0 -P2 sha256sum` (the floor);
//   s3:  a prefix on a local S3 server (s3rver in its own process, 127.0.0.1) holding 10,000 objects
//        of 64 KiB and 8 of 256 MiB, beside `rclone hashsum sha256 --download` on the same prefix
//        (the bar, ≥ 1.0×; rclone's remote is set by RCLONE_CONFIG_HASHQS3_* variables).
// Per row: seconds, objects/s, MB/s, the ratio to each peer (hashq's rate ÷ the peer's), the
// worker's CPU time (per object in the dir case, per round in the s3 case; user + system, which
// neighbours on the machine inflate far less than wall time), and the peak RSS of the API and the
// worker during the batch (VmHWM, reset before each batch). The report is checked against
// rclone's output (same names, same digests): a wrong digest fails. A timing script, not a test.
//
// Environment:
//   BENCH_BATCH_CASES   comma list of: dir,s3 (default both)
//   BENCH_BATCH_SIZES   comma list of tree sizes of the dir case (default 10000,100000)
//   BENCH_BATCH_S3_SMALL, BENCH_BATCH_S3_BIG  object counts of the s3 case (default 10000 and 8)
//   BENCH_REPEAT        rounds per row (default 3; the median is printed)
//   BENCH_BATCH_WORKERS worker processes (default 1; peak RSS is the largest of them)
//   BENCH_WORKER_NODE_ARGS  node options of the workers, space-separated (e.g. --trace-gc)
//   BATCH_GROUP_SIZE, BATCH_GROUP_CONCURRENCY, WORKER_CONCURRENCY, …  passed to the workers
//   DATABASE_URL / REDIS_URL  servers to use (the database part of DATABASE_URL is replaced)
// Trees live in .data/bench-batch/<size>, the S3 objects in .data/bench-batch-s3 (both kept for
// reuse: the first S3 run uploads 2.6 GB, a few minutes); the database hashq_bench_batch_<random>
// is dropped at the end and the BullMQ keys deleted.
const { spawn, spawnSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

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
  deleteKeys,
  BENCH_API_ENV,
  API_NODE_ARGS,
} = require('./bench-e2e/setup.cjs');
const { startS3, ensureObjectSet } = require('./bench-e2e/s3.cjs');

// The AWS SDK's notice that it will need node >= 22 in 2027 (here, the API, the worker) would
// interleave with the tables; it is about the SDK's future, not this measurement.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const ROOT = path.join(__dirname, '..');
const SIZES = (process.env.BENCH_BATCH_SIZES ?? '10000,100000')
  .split(',')
  .map((s) => Number(s.trim()))
  .filter((n) => n > 0);
const CASES = new Set((process.env.BENCH_BATCH_CASES ?? 'dir,s3').split(',').map((c) => c.trim()));
const S3_SET = {
  small: { count: Number(process.env.BENCH_BATCH_S3_SMALL ?? 10000), bytes: 64 * 1024 },
  big: { count: Number(process.env.BENCH_BATCH_S3_BIG ?? 8), bytes: 256 * 1024 * 1024 },
};
const S3_PREFIX = `set-${S3_SET.small.count}-${S3_SET.big.count}/`;
const REPEAT = Number(process.env.BENCH_REPEAT ?? 3);
const WORKERS = Number(process.env.BENCH_BATCH_WORKERS ?? 1);
const WORKER_NODE_ARGS = (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean);
const FILE_BYTES = 4096;
const SERVER_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/hashq';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** N files of 4 KiB, 1000 per folder; a marker file says the tree is complete. */
function ensureTree(dir, count) {
  const marker = path.join(path.dirname(dir), `${path.basename(dir)}.complete`);
  if (fs.existsSync(marker)) return;
  console.log(`[bench] writing ${count} files of ${FILE_BYTES} bytes to ${dir}`);
  fs.rmSync(dir, { recursive: true, force: true });
  for (let i = 0; i < count; i++) {
    const folder = path.join(dir, `d${String(Math.floor(i / 1000)).padStart(4, '0')}`);
    if (i % 1000 === 0) fs.mkdirSync(folder, { recursive: true });
    fs.writeFileSync(
      path.join(folder, `f${String(i).padStart(7, '0')}.bin`),
      randomBytes(FILE_BYTES),
    );
  }
  fs.writeFileSync(marker, '');
}

function timeShell(command, env = process.env) {
  const started = process.hrtime.bigint();
  const result = spawnSync('bash', ['-c', command], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    env,
  });
  if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr}`);
  return { seconds: Number(process.hrtime.bigint() - started) / 1e9, stdout: result.stdout };
}

/**
 * fetch() again when the connection broke: undici may reuse a kept-alive socket that the server
 * is closing after its idle timeout ("other side closed"). GETs only, and the POST carries an
 * Idempotency-Key, so a retry never makes a second batch.
 */
async function retrying(request) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await request();
    } catch (err) {
      if (attempt >= 3) throw err;
      await sleep(50);
    }
  }
}

/** One batch through the API: wall seconds from POST to its end, and the ended batch. */
async function runBatch(apiUrl, source) {
  const started = process.hrtime.bigint();
  const key = randomBytes(8).toString('hex');
  const res = await retrying(() =>
    fetch(`${apiUrl}/v1/batches`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ source, algorithms: ['sha256'] }),
    }),
  );
  if (res.status !== 202) throw new Error(`POST /v1/batches: ${res.status} ${await res.text()}`);
  const { id } = await res.json();
  for (;;) {
    const batch = await (await retrying(() => fetch(`${apiUrl}/v1/batches/${id}`))).json();
    if (!['queued', 'running'].includes(batch.status)) {
      return { seconds: Number(process.hrtime.bigint() - started) / 1e9, batch };
    }
    await sleep(200); // each GET counts the item rows: polling must not load the database
  }
}

/** `hex  name` lines sorted: hashq's report and rclone's output must be equal. */
const sortedLines = (text) => text.split('\n').filter(Boolean).sort().join('\n');

/** The dir case: per tree size, hashq, rclone and xargs in turns; the rows of its table. */
async function dirCase(apiUrl, base, api, workers) {
  const peerEnv = { ...process.env };
  delete peerEnv.AWS_CA_BUNDLE;
  const rows = [];
  for (const size of SIZES) {
    const dir = path.join(base, String(size));
    timeShell(`find ${dir} -type f -print0 | xargs -0 cat > /dev/null`); // warm the page cache
    const times = { hashq: [], rclone: [], xargs: [], workerCpu: [] };
    const rss = { api: 0, worker: 0 };
    const workerPids = workers.map((worker) => worker.pid);
    for (let round = 0; round < REPEAT; round++) {
      resetPeakRss(api.pid);
      for (const worker of workers) resetPeakRss(worker.pid);
      const cpuBefore = cpuSeconds(workerPids);
      const { seconds, batch } = await runBatch(apiUrl, { type: 'directory', path: dir });
      if (batch.status !== 'succeeded' || batch.items.succeeded !== size)
        throw new Error(`batch ended ${batch.status}: ${JSON.stringify(batch.items)}`);
      times.workerCpu.push(cpuSeconds(workerPids) - cpuBefore);
      rss.api = Math.max(rss.api, peakRssMiB(api.pid));
      for (const worker of workers) rss.worker = Math.max(rss.worker, peakRssMiB(worker.pid));
      times.hashq.push(seconds);
      const rclone = timeShell(`rclone hashsum SHA256 ${dir}`, peerEnv);
      times.rclone.push(rclone.seconds);
      times.xargs.push(
        timeShell(`cd ${dir} && find . -type f -print0 | xargs -0 -P2 sha256sum > /dev/null`)
          .seconds,
      );
      if (round === 0) await checkReport(apiUrl, batch.id, rclone.stdout);
    }
    const t = {
      hashq: median(times.hashq),
      rclone: median(times.rclone),
      xargs: median(times.xargs),
      workerCpu: median(times.workerCpu),
    };
    rows.push({ size, t, rss });
  }
  console.log(
    `\nbench:batch — directory of 4 KiB files, sha256, warm cache, median of ${REPEAT} (${new Date().toISOString()}, load ${loadAverage()})`,
  );
  console.log(
    'files    | hashq s | hashq obj/s | worker CPU µs/obj | rclone s | rclone obj/s | xargs -P2 s | vs rclone | vs xargs | API RSS MiB | worker RSS MiB',
  );
  for (const { size, t, rss } of rows) {
    const rate = (s) => Math.round(size / s);
    console.log(
      [
        String(size).padEnd(8),
        t.hashq.toFixed(2).padStart(7),
        String(rate(t.hashq)).padStart(11),
        ((t.workerCpu / size) * 1e6).toFixed(0).padStart(17),
        t.rclone.toFixed(2).padStart(8),
        String(rate(t.rclone)).padStart(12),
        t.xargs.toFixed(2).padStart(11),
        `${(t.rclone / t.hashq).toFixed(2)}×`.padStart(9),
        `${(t.xargs / t.hashq).toFixed(2)}×`.padStart(8),
        rss.api.toFixed(0).padStart(11),
        rss.worker.toFixed(0).padStart(14),
      ].join(' | '),
    );
  }
}

/**
 * The s3 case: the prefix as one batch, and `rclone hashsum sha256 --download` on it, in turns
 * (rclone first in odd rounds); the server's files are read before each round so that both read
 * from the page cache.
 */
async function s3Case(apiUrl, s3, serverDir, api, workers) {
  const objects = S3_SET.small.count + S3_SET.big.count;
  const bytes = S3_SET.small.count * S3_SET.small.bytes + S3_SET.big.count * S3_SET.big.bytes;
  const times = { hashq: [], rclone: [], workerCpu: [] };
  const rss = { api: 0, worker: 0 };
  const workerPids = workers.map((worker) => worker.pid);
  const rcloneCommand = `rclone hashsum sha256 --download hashqs3:${s3.bucket}/${S3_PREFIX}`;
  for (let round = 0; round < REPEAT; round++) {
    timeShell(`find ${serverDir} -type f -print0 | xargs -0 cat > /dev/null`);
    const runHashq = async () => {
      resetPeakRss(api.pid);
      for (const worker of workers) resetPeakRss(worker.pid);
      const source = { type: 's3', bucket: s3.bucket, prefix: S3_PREFIX };
      const cpuBefore = cpuSeconds(workerPids);
      const { seconds, batch } = await runBatch(apiUrl, source);
      times.workerCpu.push(cpuSeconds(workerPids) - cpuBefore);
      if (batch.status !== 'succeeded' || batch.items.succeeded !== objects)
        throw new Error(`batch ended ${batch.status}: ${JSON.stringify(batch.items)}`);
      rss.api = Math.max(rss.api, peakRssMiB(api.pid));
      for (const worker of workers) rss.worker = Math.max(rss.worker, peakRssMiB(worker.pid));
      times.hashq.push(seconds);
      return batch;
    };
    const runRclone = async () => {
      const rclone = await timeShellAsync(rcloneCommand, s3.rcloneEnv);
      times.rclone.push(rclone.seconds);
      return rclone;
    };
    let batch;
    let rclone;
    if (round % 2 === 0) {
      rclone = await runRclone();
      batch = await runHashq();
    } else {
      batch = await runHashq();
      rclone = await runRclone();
    }
    if (round === 0) await checkReport(apiUrl, batch.id, rclone.stdout);
  }
  const t = { hashq: median(times.hashq), rclone: median(times.rclone) };
  console.log(
    `\nbench:batch — S3 prefix on local s3rver: ${S3_SET.small.count} x 64 KiB + ${S3_SET.big.count} x 256 MiB (${(bytes / 1e6).toFixed(0)} MB), sha256, median of ${REPEAT} (${new Date().toISOString()}, load ${loadAverage()})`,
  );
  console.log(
    'tool                             |   s    | objects/s |  MB/s  | hashq ÷ it | API RSS MiB | worker RSS MiB',
  );
  const line = (label, seconds, withRss) =>
    console.log(
      [
        label.padEnd(32),
        seconds.toFixed(2).padStart(6),
        String(Math.round(objects / seconds)).padStart(9),
        (bytes / seconds / 1e6).toFixed(0).padStart(6),
        `${(seconds === t.hashq ? 1 : seconds / t.hashq).toFixed(2)}×`.padStart(10),
        (withRss ? rss.api.toFixed(0) : '').padStart(11),
        (withRss ? rss.worker.toFixed(0) : '').padStart(14),
      ].join(' | '),
    );
  line(`hashq batch (API + ${WORKERS} worker${WORKERS > 1 ? 's' : ''})`, t.hashq, true);
  line('rclone hashsum sha256 --download', t.rclone, false);
  console.log(
    `rounds (hashq s / rclone s / hashq worker CPU s): ${times.hashq.map((h, i) => `${h.toFixed(2)}/${times.rclone[i].toFixed(2)}/${times.workerCpu[i].toFixed(2)}`).join(', ')}`,
  );
}

/** The batch's sha256sum report must hold the same lines as rclone's output. */
async function checkReport(apiUrl, batchId, rcloneOutput) {
  const report = await (
    await retrying(() => fetch(`${apiUrl}/v1/batches/${batchId}/report?format=sha256sum`))
  ).text();
  if (sortedLines(report) !== sortedLines(rcloneOutput))
    throw new Error('the batch report differs from rclone hashsum');
}

const loadAverage = () =>
  require('node:os')
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/** timeShell without blocking this process (its fetches and timers go on meanwhile). */
function timeShellAsync(command, env) {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', command], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (piece) => (stdout += piece));
    child.stderr.on('data', (piece) => (stderr += piece));
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`${command} failed: ${stderr}`));
      resolve({ seconds: Number(process.hrtime.bigint() - started) / 1e9, stdout });
    });
  });
}

async function main() {
  ensureBuilt(APP_BUILD_FILES);
  const { Client } = require('pg');
  const { Redis } = require('ioredis');
  const { runMigrations } = require(path.join(ROOT, 'dist/libs/database/src/migrate.js'));
  if (spawnSync('rclone', ['version']).status !== 0)
    throw new Error('rclone is missing: apt-get install -y rclone');

  const base = path.join(ROOT, '.data', 'bench-batch');
  fs.mkdirSync(base, { recursive: true });
  if (CASES.has('dir')) for (const size of SIZES) ensureTree(path.join(base, String(size)), size);

  const database = `hashq_bench_batch_${randomBytes(4).toString('hex')}`;
  const admin = new Client({
    connectionString: databaseUrlFor(SERVER_URL, 'postgres'),
  });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  const databaseUrl = databaseUrlFor(SERVER_URL, database);
  let api;
  const workers = [];
  let s3;
  const s3Dir = path.join(ROOT, '.data', 'bench-batch-s3');
  try {
    if (CASES.has('s3')) {
      s3 = await startS3(s3Dir, 'hashq-bench-batch');
      await ensureObjectSet(
        s3,
        S3_PREFIX,
        S3_SET.small,
        S3_SET.big,
        `${s3Dir}.${S3_PREFIX.slice(0, -1)}.complete`,
      );
    }
    await runMigrations({ databaseUrl, databaseSchema: 'public' });
    const port = await freePort();
    const env = {
      ...process.env,
      ...s3?.env,
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      DATABASE_SCHEMA: 'public',
      REDIS_URL,
      QUEUE_PREFIX: database,
      HASHQ_FILE_ROOTS: base,
      HASHQ_STATE_KEYS: `bench:${randomBytes(32).toString('base64')}`,
      ...BENCH_API_ENV,
      WORKER_METRICS_PORT: '0',
      BATCH_MAX_ACTIVE: '100',
      LOG_LEVEL: 'warn',
    };
    api = startProcess('dist/apps/api/main.js', 'dist/apps/api/main.js', env, {
      nodeArgs: API_NODE_ARGS,
    });
    for (let i = 0; i < WORKERS; i++)
      workers.push(
        startProcess(`worker ${i + 1}`, 'dist/apps/worker/main.js', env, {
          nodeArgs: WORKER_NODE_ARGS,
        }),
      );
    const apiUrl = `http://127.0.0.1:${port}`;
    await waitHealthy(apiUrl, 120);
    if (CASES.has('dir')) await dirCase(apiUrl, base, api, workers);
    if (s3) await s3Case(apiUrl, s3, path.join(s3Dir, s3.bucket, S3_PREFIX), api, workers);
  } finally {
    await Promise.all(workers.map((worker) => stopProcess(worker)));
    await stopProcess(api);
    await s3?.stop();
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
    const redis = new Redis(REDIS_URL);
    await deleteKeys(redis, database);
    redis.disconnect();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
