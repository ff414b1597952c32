#!/usr/bin/env node
// `npm run bench:batch`: a directory batch of N files of 4 KiB (sha256, warm page cache) end to end
// through the API and a worker (POST /v1/batches → listing → groups hashed → status 'succeeded'),
// next to its peers on the same tree in the same round:
//   - `rclone hashsum SHA256 <dir>` (Debian's rclone, default checkers): the bar (≥ 1.0×);
//   - `find <dir> -type f -print0 | xargs -0 -P2 sha256sum`: the floor.
// Per size: seconds, objects/s, the ratio to each peer (objects/s of hashq ÷ the peer's), and the
// peak RSS of the API and the worker during the batch (VmHWM, reset before each batch). The
// report is checked against rclone's output (same names, same digests): a wrong digest fails.
// A timing script, not a test.
//
// Environment:
//   BENCH_BATCH_SIZES   comma list of tree sizes (default 10000,100000)
//   BENCH_REPEAT        rounds per size (default 3; the median is printed)
//   BATCH_GROUP_SIZE, BATCH_GROUP_CONCURRENCY  passed to the worker
//   DATABASE_URL / REDIS_URL  servers to use (the database part of DATABASE_URL is replaced)
// Trees live in .data/bench-batch/<size> (kept for reuse); the database hashq_bench_batch_<random>
// is dropped at the end and the BullMQ keys deleted.
const { spawnSync } = require('node:child_process');
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
  databaseUrlFor,
  deleteKeys,
  BENCH_API_ENV,
} = require('./bench-e2e/setup.cjs');

const ROOT = path.join(__dirname, '..');
const SIZES = (process.env.BENCH_BATCH_SIZES ?? '10000,100000')
  .split(',')
  .map((s) => Number(s.trim()))
  .filter((n) => n > 0);
const REPEAT = Number(process.env.BENCH_REPEAT ?? 3);
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
async function runBatch(apiUrl, dir) {
  const started = process.hrtime.bigint();
  const key = randomBytes(8).toString('hex');
  const res = await retrying(() =>
    fetch(`${apiUrl}/v1/batches`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ source: { type: 'directory', path: dir }, algorithms: ['sha256'] }),
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

async function main() {
  ensureBuilt(APP_BUILD_FILES);
  const { Client } = require('pg');
  const { Redis } = require('ioredis');
  const { runMigrations } = require(path.join(ROOT, 'dist/libs/database/src/migrate.js'));
  if (spawnSync('rclone', ['version']).status !== 0)
    throw new Error('rclone is missing: apt-get install -y rclone');

  const base = path.join(ROOT, '.data', 'bench-batch');
  fs.mkdirSync(base, { recursive: true });
  for (const size of SIZES) ensureTree(path.join(base, String(size)), size);

  const database = `hashq_bench_batch_${randomBytes(4).toString('hex')}`;
  const admin = new Client({
    connectionString: databaseUrlFor(SERVER_URL, 'postgres'),
  });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  const databaseUrl = databaseUrlFor(SERVER_URL, database);
  let api;
  let worker;
  try {
    await runMigrations({ databaseUrl, databaseSchema: 'public' });
    const port = await freePort();
    const env = {
      ...process.env,
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
    api = startProcess('dist/apps/api/main.js', 'dist/apps/api/main.js', env);
    worker = startProcess('dist/apps/worker/main.js', 'dist/apps/worker/main.js', env);
    const apiUrl = `http://127.0.0.1:${port}`;
    await waitHealthy(apiUrl, 120);

    const peerEnv = { ...process.env };
    delete peerEnv.AWS_CA_BUNDLE;
    const rows = [];
    for (const size of SIZES) {
      const dir = path.join(base, String(size));
      timeShell(`find ${dir} -type f -print0 | xargs -0 cat > /dev/null`); // warm the page cache
      const times = { hashq: [], rclone: [], xargs: [] };
      const rss = { api: 0, worker: 0 };
      for (let round = 0; round < REPEAT; round++) {
        resetPeakRss(api.pid);
        resetPeakRss(worker.pid);
        const { seconds, batch } = await runBatch(apiUrl, dir);
        if (batch.status !== 'succeeded' || batch.items.succeeded !== size)
          throw new Error(`batch ended ${batch.status}: ${JSON.stringify(batch.items)}`);
        rss.api = Math.max(rss.api, peakRssMiB(api.pid));
        rss.worker = Math.max(rss.worker, peakRssMiB(worker.pid));
        times.hashq.push(seconds);
        const rclone = timeShell(`rclone hashsum SHA256 ${dir}`, peerEnv);
        times.rclone.push(rclone.seconds);
        times.xargs.push(
          timeShell(`cd ${dir} && find . -type f -print0 | xargs -0 -P2 sha256sum > /dev/null`)
            .seconds,
        );
        if (round === 0) {
          const report = await (
            await fetch(`${apiUrl}/v1/batches/${batch.id}/report?format=sha256sum`)
          ).text();
          if (sortedLines(report) !== sortedLines(rclone.stdout))
            throw new Error('the batch report differs from rclone hashsum');
        }
      }
      const t = {
        hashq: median(times.hashq),
        rclone: median(times.rclone),
        xargs: median(times.xargs),
      };
      rows.push({ size, t, rss });
    }

    console.log(
      `\nbench:batch — directory of 4 KiB files, sha256, warm cache, median of ${REPEAT} (${new Date().toISOString()})`,
    );
    console.log(
      'files    | hashq s | hashq obj/s | rclone s | rclone obj/s | xargs -P2 s | vs rclone | vs xargs | API RSS MiB | worker RSS MiB',
    );
    for (const { size, t, rss } of rows) {
      const rate = (s) => Math.round(size / s);
      console.log(
        [
          String(size).padEnd(8),
          t.hashq.toFixed(2).padStart(7),
          String(rate(t.hashq)).padStart(11),
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
  } finally {
    await stopProcess(worker);
    await stopProcess(api);
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
