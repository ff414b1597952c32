#!/usr/bin/env node
// `npm run bench:e2e`: end-to-end throughput of a hash job through the API and one worker, next to
// `openssl dgst -sha256` and `sha256sum` of the same file (page cache warm for all), as ratios; the
// cost of checkpoints (every 64 MiB vs every 1 GiB); sha256+sha512 in one job vs each alone; and the
// worker's peak RSS. A timing script, not a test: it prints numbers and asserts nothing.
//
// Runs on its own database (hashq_bench_<random>, dropped at the end), queue prefix and file root
// (.data/bench). Environment: BENCH_BYTES (default 1 GiB), BENCH_REPEAT (default 3, the median is
// printed), DATABASE_URL / REDIS_URL (servers to use; the database part is replaced).
const { execFileSync, spawn, spawnSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
const BYTES = Number(process.env.BENCH_BYTES ?? GiB);
const REPEAT = Number(process.env.BENCH_REPEAT ?? 3);
const SERVER_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/hashq';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const fmt = (seconds) => `${seconds.toFixed(3)} s`;
const rate = (seconds) => `${(BYTES / seconds / GiB).toFixed(2)} GiB/s`;

function ensureBuilt() {
  for (const file of ['dist/apps/api/main.js', 'dist/apps/worker/main.js', 'dist/libs/database/src/migrate.js']) {
    if (!fs.existsSync(path.join(ROOT, file))) {
      console.log('[bench] building (npm run build)');
      execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
      return;
    }
  }
}

async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function writeTestFile(file) {
  if (fs.existsSync(file) && fs.statSync(file).size === BYTES) return;
  console.log(`[bench] writing ${BYTES} random bytes to ${file}`);
  const fd = fs.openSync(file, 'w');
  const block = 8 * MiB;
  for (let done = 0; done < BYTES; done += block) fs.writeSync(fd, randomBytes(Math.min(block, BYTES - done)));
  fs.closeSync(fd);
}

/** Median seconds of REPEAT runs of a command (and its last stdout). */
function timeCommand(cmd, args) {
  const times = [];
  let stdout = '';
  for (let i = 0; i < REPEAT; i++) {
    const started = process.hrtime.bigint();
    const result = spawnSync(cmd, args, { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`${cmd} failed: ${result.stderr}`);
    times.push(Number(process.hrtime.bigint() - started) / 1e9);
    stdout = result.stdout;
  }
  return { seconds: median(times), stdout };
}

function startProcess(name, script, env) {
  const child = spawn(process.execPath, [script], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
  child.on('exit', (code, signal) => {
    if (!child.stopping) console.error(`[bench] ${name} exited (${code ?? signal})`);
  });
  return child;
}

async function stopProcess(child) {
  if (child.exitCode !== null) return;
  child.stopping = true;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** Peak resident set size (VmHWM) of a live process, in MiB. */
function peakRssMiB(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)[1]);
  return kb / 1024;
}

async function waitHealthy(url) {
  for (let i = 0; i < 240; i++) {
    try {
      if ((await fetch(`${url}/health`)).ok) return;
    } catch {
      // starting
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error('API did not become healthy');
}

async function runJob(apiUrl, file, algorithms) {
  const res = await fetch(`${apiUrl}/v1/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ source: { type: 'file', path: file }, algorithms }),
  });
  if (res.status !== 202) throw new Error(`submit: ${res.status} ${await res.text()}`);
  const { id } = await res.json();
  for (;;) {
    const job = await (await fetch(`${apiUrl}/v1/jobs/${id}`)).json();
    if (job.status === 'succeeded') {
      const seconds = (Date.parse(job.finishedAt) - Date.parse(job.startedAt)) / 1000;
      return { seconds, job };
    }
    if (job.status === 'failed' || job.status === 'canceled') throw new Error(`job ${id} ${job.status}: ${JSON.stringify(job.error)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Runs `algorithms` REPEAT times on a fresh worker with the given checkpoint settings. */
async function benchJobs(ctx, label, algorithms, workerEnv) {
  const worker = startProcess('worker', 'dist/apps/worker/main.js', { ...ctx.env, ...workerEnv });
  try {
    const runs = [];
    let last;
    for (let i = 0; i < REPEAT; i++) {
      last = await runJob(ctx.apiUrl, ctx.file, algorithms);
      runs.push(last.seconds);
    }
    const rss = peakRssMiB(worker.pid);
    const seconds = median(runs);
    console.log(
      `  ${label.padEnd(42)} ${fmt(seconds)}  ${rate(seconds)}  (runs: ${runs.map((s) => s.toFixed(3)).join(', ')}; worker peak RSS ${rss.toFixed(0)} MiB)`,
    );
    return { seconds, job: last.job, rss };
  } finally {
    await stopProcess(worker);
  }
}

async function main() {
  ensureBuilt();
  const { Client } = require('pg');
  const { Redis } = require('ioredis');
  const { runMigrations } = require(path.join(ROOT, 'dist/libs/database/src/migrate.js'));

  const id = randomBytes(4).toString('hex');
  const database = `hashq_bench_${id}`;
  const adminUrl = Object.assign(new URL(SERVER_URL), { pathname: '/postgres' }).toString();
  const databaseUrl = Object.assign(new URL(SERVER_URL), { pathname: `/${database}` }).toString();
  const fileRoot = path.join(ROOT, '.data', 'bench');
  fs.mkdirSync(fileRoot, { recursive: true });
  const file = path.join(fileRoot, `bench-${BYTES}.bin`);
  const port = await freePort();
  const env = {
    ...process.env,
    PORT: String(port),
    DATABASE_URL: databaseUrl,
    DATABASE_SCHEMA: 'public',
    REDIS_URL,
    QUEUE_PREFIX: `hashq_bench_${id}`,
    HASHQ_FILE_ROOTS: fileRoot,
    LOG_LEVEL: 'warn',
  };

  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  let api;
  try {
    await runMigrations({ databaseUrl, databaseSchema: 'public' });
    writeTestFile(file);
    api = startProcess('api', 'dist/apps/api/main.js', env);
    const apiUrl = `http://127.0.0.1:${port}`;
    await waitHealthy(apiUrl);
    const ctx = { env, apiUrl, file };

    spawnSync('cat', [file], { stdio: ['ignore', 'ignore', 'inherit'] }); // warm the page cache
    console.log(`\nhashq e2e bench: ${BYTES} bytes, median of ${REPEAT} runs, node ${process.version}, ${require('node:os').cpus().length} cores\n`);
    console.log('reference tools (same file, page cache warm):');
    const openssl = timeCommand('openssl', ['dgst', '-sha256', file]);
    console.log(`  ${'openssl dgst -sha256'.padEnd(42)} ${fmt(openssl.seconds)}  ${rate(openssl.seconds)}`);
    const sha256sum = timeCommand('sha256sum', [file]);
    console.log(`  ${'sha256sum'.padEnd(42)} ${fmt(sha256sum.seconds)}  ${rate(sha256sum.seconds)}`);
    const sha512 = timeCommand('openssl', ['dgst', '-sha512', file]);
    console.log(`  ${'openssl dgst -sha512'.padEnd(42)} ${fmt(sha512.seconds)}  ${rate(sha512.seconds)}`);

    console.log('\nhashq jobs (job time = finishedAt - startedAt, as the API reports it):');
    const ck64 = { CHECKPOINT_BYTES: String(64 * MiB), CHECKPOINT_SECONDS: '5' };
    const ck1g = { CHECKPOINT_BYTES: String(GiB), CHECKPOINT_SECONDS: '3600' };
    const a = await benchJobs(ctx, 'sha256, checkpoint every 64 MiB / 5 s', ['sha256'], ck64);
    const b = await benchJobs(ctx, 'sha256, checkpoint every 1 GiB', ['sha256'], ck1g);
    const c = await benchJobs(ctx, 'sha512, checkpoint every 64 MiB / 5 s', ['sha512'], ck64);
    const d = await benchJobs(ctx, 'sha256 + sha512, checkpoint every 64 MiB', ['sha256', 'sha512'], ck64);

    const expected256 = openssl.stdout.trim().split('= ').pop();
    if (a.job.digests.sha256.hex !== expected256) throw new Error('sha256 digest differs from openssl');
    const slower = Math.max(a.seconds, c.seconds);
    console.log('\nratios (> 1.00 = hashq faster):');
    console.log(`  job sha256 vs openssl dgst -sha256        ${(openssl.seconds / a.seconds).toFixed(2)}x   (target >= 1.00x)`);
    console.log(`  job sha256 vs sha256sum                   ${(sha256sum.seconds / a.seconds).toFixed(2)}x`);
    console.log(`  checkpoint overhead 64 MiB vs 1 GiB       ${(((a.seconds - b.seconds) / b.seconds) * 100).toFixed(1)} %   (target <= 3 %)`);
    console.log(`  sha256+sha512 vs slower of the two alone  ${(((d.seconds - slower) / slower) * 100).toFixed(1)} %   (target <= 15 %)`);
    console.log(`  worker peak RSS                           ${Math.max(a.rss, b.rss, c.rss, d.rss).toFixed(0)} MiB (bounded: chunk size x read-ahead, not file size)`);
    console.log(`  digests checked against openssl: sha256 ${expected256.slice(0, 16)}…`);
  } finally {
    if (api) await stopProcess(api);
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
    const redis = new Redis(REDIS_URL);
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${env.QUEUE_PREFIX}:*`, 'COUNT', 500);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
    redis.disconnect();
  }
}

main().catch((err) => {
  console.error(`[bench] ${err.stack ?? err}`);
  process.exit(1);
});
