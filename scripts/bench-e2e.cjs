#!/usr/bin/env node
// `npm run bench:e2e`: end-to-end throughput of hash jobs through the API and a worker, each next
// to a peer measured back to back in the same round (same file, page cache warm), as ratios:
//   - sha256 job vs `openssl dgst -sha256`, `sha256sum` and a pure-node loop (fs + updateAsync);
//   - checkpoint overhead: the sha256 job with checkpoints every 64 MiB / 5 s vs every 1 GiB;
//   - sha512 job vs `openssl dgst -sha512`; sha256+sha512 in one job vs the slower one alone;
//   - md5 + sha256 + crc64nvme in one job vs the three jobs one after another;
//   - sha256 of the same bytes as an S3 object (local s3rver, its own process) vs the file job, a
//     bare GetObject, a bare read `rclone cat … > /dev/null` (target >= 0.9x) and
//     `rclone hashsum sha256 --download` (Debian's rclone, configured by environment variables).
// Per case: min and median job time, MB/s and s/GiB of the median, ratio to the peer (median and
// worst of the per-round ratios), worker peak RSS; then where the job's time went (per phase).
// A timing script, not a test: it prints numbers and asserts only that the digests are right.
//
// Two API+worker pairs (checkpoints 64 MiB / 5 s and 1 GiB) so that the two checkpoint settings
// run in the same round; each pair has its own database (hashq_bench_<random>_<pair>, dropped at
// the end) and BullMQ prefix. File root .data/bench, S3 data .data/bench-s3 (both kept for reuse).
//
// Environment:
//   BENCH_BYTES     file size (default 1 GiB)
//   BENCH_S3_BYTES  S3 object size (default 1 GiB; 0 skips the S3 case)
//   BENCH_REPEAT    rounds (default 3)
//   BENCH_CASES     comma list of: sha256,checkpoint,sha512,multi,s3 (default all)
//   CHUNK_BYTES     passed to the workers (default: the worker's own, 8 MiB)
//   BENCH_WORKER_NODE_ARGS  node options for the workers, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"
//                   (a profile per worker, written when it stops at the end)
//   DATABASE_URL / REDIS_URL  servers to use (the database part of DATABASE_URL is replaced)
const { spawn, spawnSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');

// The AWS SDK's notice that it will need node >= 22 in 2027 (once per process: here, the workers,
// the S3 peer) would interleave with the tables; it is about the SDK's future, not this measurement.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

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
  childrenCpuSeconds,
  databaseUrlFor,
  deleteKeys,
  BENCH_API_ENV,
  API_NODE_ARGS,
} = require('./bench-e2e/setup.cjs');
const { printTable, median, fmtRatio } = require('./bench-e2e/table.cjs');
const { startS3, ensureObject } = require('./bench-e2e/s3.cjs');

const ROOT = path.join(__dirname, '..');
const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
const BYTES = Number(process.env.BENCH_BYTES ?? GiB);
const S3_BYTES = Number(process.env.BENCH_S3_BYTES ?? GiB);
const REPEAT = Number(process.env.BENCH_REPEAT ?? 3);
const CASES = new Set(
  (process.env.BENCH_CASES ?? 'sha256,checkpoint,sha512,multi,s3').split(',').map((c) => c.trim()),
);
const CHUNK_BYTES = Number(process.env.CHUNK_BYTES ?? 8 * MiB);
const SERVER_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/hashq';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function writeTestFile(file, bytes) {
  if (fs.existsSync(file) && fs.statSync(file).size === bytes) return;
  console.log(`[bench] writing ${bytes} random bytes to ${file}`);
  const fd = fs.openSync(file, 'w');
  const block = 8 * MiB;
  for (let done = 0; done < bytes; done += block)
    fs.writeSync(fd, randomBytes(Math.min(block, bytes - done)));
  fs.closeSync(fd);
}

/** Reads a file once so that its pages are in the page cache (a missing file is skipped). */
function warm(file) {
  if (fs.existsSync(file)) spawnSync('cat', [file], { stdio: ['ignore', 'ignore', 'inherit'] });
}

/** Wall seconds of one run of a command, and its stdout. */
function timeCommand(cmd, args, env = process.env) {
  const started = process.hrtime.bigint();
  const result = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 16 * MiB, env });
  if (result.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${result.stderr}`);
  return { seconds: Number(process.hrtime.bigint() - started) / 1e9, stdout: result.stdout };
}

/** A node helper that times itself (no process start-up in the figure). */
async function timeNodeHelper(script, args) {
  const child = spawn(process.execPath, [path.join(__dirname, 'bench-e2e', script), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout.on('data', (piece) => (stdout += piece));
  const code = await new Promise((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`${script} failed (${code})`);
  return JSON.parse(stdout);
}

const opensslHex = (stdout) => stdout.trim().split('= ').pop();

/**
 * An API or worker process; its stdout is read for the worker's 'finished' log records (per job:
 * where the time went).
 */
function startLogged(name, script, env) {
  const nodeArgs = name.startsWith('worker')
    ? (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean)
    : API_NODE_ARGS;
  const child = startProcess(name, script, env, { nodeArgs, stdout: 'pipe' });
  child.records = new Map(); // jobId -> the worker's 'finished' log record
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    let record;
    try {
      record = JSON.parse(line);
    } catch {
      return;
    }
    if (record.msg === 'finished' && record.jobId) child.records.set(record.jobId, record);
  });
  return child;
}

/** PostgreSQL backends serving a database (their CPU is part of what a checkpoint costs). */
async function backendPids(admin, database) {
  const { rows } = await admin.query('SELECT pid FROM pg_stat_activity WHERE datname = $1', [
    database,
  ]);
  return rows.map((row) => row.pid);
}

/**
 * An API and a worker with their own database and queue prefix; `workerEnv` holds the settings
 * under test (checkpoint interval).
 */
async function startPair(name, common, workerEnv, admin) {
  const { runMigrations } = require(path.join(ROOT, 'dist/libs/database/src/migrate.js'));
  const database = `${common.id}_${name}`;
  const databaseUrl = databaseUrlFor(SERVER_URL, database);
  await admin.query(`CREATE DATABASE ${database}`);
  const pair = { name, database, prefix: database, admin, api: null, worker: null };
  common.pairs.push(pair);
  await runMigrations({ databaseUrl, databaseSchema: 'public' });
  const port = await freePort();
  const env = {
    ...process.env,
    ...common.env,
    PORT: String(port),
    DATABASE_URL: databaseUrl,
    DATABASE_SCHEMA: 'public',
    QUEUE_PREFIX: database,
    WORKER_METRICS_PORT: '0',
  };
  pair.api = startLogged(`api ${name}`, 'dist/apps/api/main.js', { ...env, LOG_LEVEL: 'warn' });
  pair.worker = startLogged(`worker ${name}`, 'dist/apps/worker/main.js', {
    ...env,
    ...workerEnv,
    LOG_LEVEL: 'info',
  });
  pair.apiUrl = `http://127.0.0.1:${port}`;
  await waitHealthy(pair.apiUrl);
  return pair;
}

/**
 * fetch() again when the connection broke: undici may reuse a kept-alive socket that the server
 * is closing after its idle timeout ("fetch failed", cause "other side closed").
 */
async function retrying(request) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await request();
    } catch (err) {
      if (attempt >= 3)
        throw new Error(`${err.message} (${err.cause?.message ?? err.cause?.code ?? 'no cause'})`);
      await sleep(50);
    }
  }
}

/** Submits a job, waits for it; times come from the job's own timestamps. */
async function runJob(pair, source, algorithms) {
  resetPeakRss(pair.worker.pid);
  const pgPids = await backendPids(pair.admin, pair.database);
  const cpuBefore = { worker: cpuSeconds([pair.worker.pid]), pg: cpuSeconds(pgPids) };
  // An idempotency key makes the retry of a submit whose connection broke safe (same key: same job).
  const key = randomBytes(8).toString('hex');
  const res = await retrying(() =>
    fetch(`${pair.apiUrl}/v1/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ source, algorithms }),
    }),
  );
  if (res.status !== 202) throw new Error(`submit: ${res.status} ${await res.text()}`);
  const { id } = await res.json();
  for (;;) {
    await sleep(100); // polling costs CPU beside the job: keep it rare (the times below are the server's)
    const job = await (await retrying(() => fetch(`${pair.apiUrl}/v1/jobs/${id}`))).json();
    if (job.status === 'succeeded') {
      const created = Date.parse(job.createdAt);
      const started = Date.parse(job.startedAt);
      const finished = Date.parse(job.finishedAt);
      for (let i = 0; i < 20 && !pair.worker.records.has(id); i++) await sleep(25); // the log line may trail
      const workerCpu = cpuSeconds([pair.worker.pid]) - cpuBefore.worker;
      const newPids = (await backendPids(pair.admin, pair.database)).filter(
        (pid) => !pgPids.includes(pid),
      );
      const pgCpu = cpuSeconds(pgPids) - cpuBefore.pg + cpuSeconds(newPids);
      return {
        workerCpu,
        pgCpu,
        seconds: (finished - started) / 1000,
        pickupMs: started - created,
        job,
        rss: peakRssMiB(pair.worker.pid),
        trace: pair.worker.records.get(id),
      };
    }
    if (job.status === 'failed' || job.status === 'canceled') {
      throw new Error(`job ${id} ${job.status}: ${JSON.stringify(job.error)}`);
    }
  }
}

/**
 * Runs one S3 measurement and adds to its entry the CPU seconds of the S3 server (`serverCpu`) and
 * of the client (`clientCpu`: a peer process, ended and waited for; the worker for a job).
 */
async function s3Cpu(s3, measure) {
  const server = cpuSeconds([s3.pid]);
  const children = childrenCpuSeconds();
  const entry = await measure();
  entry.serverCpu = cpuSeconds([s3.pid]) - server;
  entry.clientCpu = entry.workerCpu ?? childrenCpuSeconds() - children;
  return entry;
}

/** Named series of measurements, one entry per round. */
class Results {
  constructor() {
    this.series = new Map();
  }
  add(name, entry) {
    if (!this.series.has(name)) this.series.set(name, []);
    this.series.get(name).push(entry);
    return entry;
  }
  get(name) {
    return this.series.get(name) ?? [];
  }
  seconds(name) {
    return this.get(name).map((e) => e.seconds);
  }
}

async function main() {
  ensureBuilt(APP_BUILD_FILES);
  const { Client } = require('pg');
  const { Redis } = require('ioredis');

  const id = `hashq_bench_${randomBytes(4).toString('hex')}`;
  const fileRoot = path.join(ROOT, '.data', 'bench');
  fs.mkdirSync(fileRoot, { recursive: true });
  const file = path.join(fileRoot, `bench-${BYTES}.bin`);
  const adminUrl = databaseUrlFor(SERVER_URL, 'postgres');
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  const stateKeys = `bench:${randomBytes(32).toString('base64')}`; // the states of these throwaway databases
  const common = {
    id,
    pairs: [],
    env: { REDIS_URL, HASHQ_FILE_ROOTS: fileRoot, HASHQ_STATE_KEYS: stateKeys, ...BENCH_API_ENV },
  };
  if (process.env.CHUNK_BYTES) common.env.CHUNK_BYTES = String(CHUNK_BYTES);
  let s3;
  try {
    writeTestFile(file, BYTES);
    let s3File;
    let s3Key;
    if (CASES.has('s3') && S3_BYTES > 0) {
      s3File = path.join(fileRoot, `bench-${S3_BYTES}.bin`);
      writeTestFile(s3File, S3_BYTES);
      if (spawnSync('rclone', ['version']).status !== 0)
        throw new Error('rclone is missing (the S3 peers): apt-get install -y rclone');
      s3 = await startS3(path.join(ROOT, '.data', 'bench-s3'));
      s3Key = `bench-${S3_BYTES}.bin`;
      if (await ensureObject(s3, s3Key, s3File))
        console.log(`[bench] uploaded ${s3Key} to the local S3 server`);
      Object.assign(common.env, s3.env);
    }
    const ck64 = { CHECKPOINT_BYTES: String(64 * MiB), CHECKPOINT_SECONDS: '5' };
    const ck1g = { CHECKPOINT_BYTES: String(GiB), CHECKPOINT_SECONDS: '3600' };
    const [pairA, big] = await Promise.all([
      startPair('a', common, ck64, admin),
      CASES.has('checkpoint') ? startPair('b', common, ck1g, admin) : null,
    ]);

    const fileSource = { type: 'file', path: file };
    const r = new Results();
    const hex = {};
    warm(file);
    if (s3File && s3File !== file) warm(s3File);
    // One untimed job per worker: the first job of a process pays for JIT warm-up and connection set-up.
    await runJob(pairA, fileSource, ['sha256']);
    if (big) await runJob(big, fileSource, ['sha256']);

    console.log(
      `\nhashq e2e bench: file ${BYTES} bytes, chunk ${CHUNK_BYTES / MiB} MiB, ${REPEAT} rounds, node ${process.version}, ` +
        `${os.cpus().length} x ${os.cpus()[0]?.model ?? '?'}, load ${os
          .loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}`,
    );
    for (let round = 1; round <= REPEAT; round++) {
      process.stderr.write(`[bench] round ${round}/${REPEAT}\n`);
      if (CASES.has('sha256') || CASES.has('checkpoint')) {
        hex.openssl256 = opensslHex(
          r.add('openssl-sha256', timeCommand('openssl', ['dgst', '-sha256', file])).stdout,
        );
        // The two checkpoint settings in turns (odd rounds 64 MiB first, even rounds 1 GiB first).
        const order =
          round % 2 === 1 || !big
            ? [
                [pairA, 'job-sha256'],
                [big, 'job-sha256-ck1g'],
              ]
            : [
                [big, 'job-sha256-ck1g'],
                [pairA, 'job-sha256'],
              ];
        for (const [pair, series] of order)
          if (pair) r.add(series, await runJob(pair, fileSource, ['sha256']));
      }
      if (CASES.has('sha256')) {
        r.add('sha256sum', timeCommand('sha256sum', [file]));
        r.add(
          'node-loop',
          await timeNodeHelper('node-loop.cjs', [file, 'sha256', String(CHUNK_BYTES), '1']),
        );
      }
      if (CASES.has('sha512')) {
        hex.openssl512 = opensslHex(
          r.add('openssl-sha512', timeCommand('openssl', ['dgst', '-sha512', file])).stdout,
        );
        r.add('job-sha512', await runJob(pairA, fileSource, ['sha512']));
        r.add('job-sha256+sha512', await runJob(pairA, fileSource, ['sha256', 'sha512']));
        if (!CASES.has('sha256')) r.add('job-sha256', await runJob(pairA, fileSource, ['sha256']));
      }
      if (CASES.has('multi')) {
        hex.opensslMd5 = opensslHex(
          r.add('openssl-md5', timeCommand('openssl', ['dgst', '-md5', file])).stdout,
        );
        const md5 = r.add('job-md5', await runJob(pairA, fileSource, ['md5']));
        const sha = r.add('job-sha256-m', await runJob(pairA, fileSource, ['sha256']));
        const crc = r.add('job-crc64nvme', await runJob(pairA, fileSource, ['crc64nvme']));
        r.add('three-jobs', {
          seconds: md5.seconds + sha.seconds + crc.seconds,
          rss: Math.max(md5.rss, sha.rss, crc.rss),
        });
        r.add('job-multi', await runJob(pairA, fileSource, ['md5', 'sha256', 'crc64nvme']));
      }
      if (s3) {
        // The page cache may drop the server's copy of the object between rounds (it is read once
        // per round): bring it back, so the S3 figures measure the server, not the disk.
        warm(path.join(ROOT, '.data', 'bench-s3', s3.bucket, `${s3Key}._S3rver_object`));
        r.add(
          's3-get',
          await s3Cpu(s3, () => timeNodeHelper('s3-get.cjs', [s3.endpoint, s3.bucket, s3Key])),
        );
        const remote = `hashqs3:${s3.bucket}/${s3Key}`;
        r.add(
          'rclone-cat',
          await s3Cpu(s3, () =>
            timeCommand('bash', ['-c', `rclone cat ${remote} > /dev/null`], s3.rcloneEnv),
          ),
        );
        const sum = r.add(
          'rclone-hashsum',
          await s3Cpu(s3, () =>
            timeCommand('rclone', ['hashsum', 'sha256', '--download', remote], s3.rcloneEnv),
          ),
        );
        sum.hex = sum.stdout.split(' ')[0];
        r.add(
          'job-s3-sha256',
          await s3Cpu(s3, () =>
            runJob(pairA, { type: 's3', bucket: s3.bucket, key: s3Key }, ['sha256']),
          ),
        );
        r.add('job-sha256-f', await runJob(pairA, { type: 'file', path: s3File }, ['sha256']));
      }
    }

    checkDigests(r, hex, file, s3File);
    report(r, s3File ? S3_BYTES : BYTES);
  } finally {
    await cleanUp(common, admin, Redis, s3);
  }
}

/** Every digest is compared with an independent tool's (openssl) before any number is printed. */
function checkDigests(r, hex, file, s3File) {
  const check = (series, algorithm, expected) => {
    for (const run of r.get(series)) {
      const got = run.job?.digests?.[algorithm]?.hex ?? run.hex;
      if (got !== expected)
        throw new Error(`${series}: ${algorithm} ${got} differs from openssl's ${expected}`);
    }
  };
  // Only the sha256 case runs openssl -sha256 in its rounds; the others need the value too.
  const sha256 =
    hex.openssl256 ?? opensslHex(timeCommand('openssl', ['dgst', '-sha256', file]).stdout);
  for (const s of [
    'job-sha256',
    'job-sha256-ck1g',
    'node-loop',
    'job-sha256+sha512',
    'job-sha256-m',
    'job-multi',
  ]) {
    check(s, 'sha256', sha256);
  }
  for (const s of ['job-sha512', 'job-sha256+sha512']) check(s, 'sha512', hex.openssl512);
  for (const s of ['job-md5', 'job-multi']) check(s, 'md5', hex.opensslMd5);
  const crc = r.get('job-crc64nvme').map((run) => run.job.digests.crc64nvme.hex);
  for (const run of r.get('job-multi')) {
    if (run.job.digests.crc64nvme.hex !== crc[0])
      throw new Error('crc64nvme differs between the one-pass job and its own job');
  }
  if (s3File) {
    const expected = opensslHex(timeCommand('openssl', ['dgst', '-sha256', s3File]).stdout);
    for (const s of ['job-s3-sha256', 'job-sha256-f', 'rclone-hashsum'])
      check(s, 'sha256', expected);
  }
}

function report(r, s3Bytes) {
  const rate = (seconds, bytes = BYTES) => (bytes / seconds / 1e6).toFixed(0);
  const perGiB = (seconds, bytes = BYTES) => ((seconds * GiB) / bytes).toFixed(3);
  /** Per-round ratio peer/job (> 1: hashq faster): median and worst. */
  const ratios = (job, peer) => {
    const a = r.seconds(job);
    const b = r.seconds(peer);
    const each = a.map((s, i) => b[i] / s).filter(Number.isFinite);
    return each.length ? `${fmtRatio(median(each))} (worst ${fmtRatio(Math.min(...each))})` : '';
  };
  const rows = [];
  const row = (label, series, peer, bytes = BYTES) => {
    const s = r.seconds(series);
    if (s.length === 0) return;
    const rss = r
      .get(series)
      .map((e) => e.rss)
      .filter((x) => x !== undefined);
    rows.push([
      label,
      Math.min(...s).toFixed(3),
      median(s).toFixed(3),
      rate(median(s), bytes),
      perGiB(median(s), bytes),
      peer ? peer[0] : '',
      peer ? ratios(series, peer[1]) : '',
      rss.length ? Math.max(...rss).toFixed(0) : '',
    ]);
  };
  console.log(
    `\nthroughput (job time = finishedAt - startedAt of the job; peers run back to back with it in each round; ratio = peer time / job time, > 1.00x: hashq faster)`,
  );
  row('openssl dgst -sha256', 'openssl-sha256');
  row('sha256sum', 'sha256sum');
  row('node fs + updateAsync loop, sha256', 'node-loop');
  row('job sha256, checkpoint 64 MiB / 5 s', 'job-sha256', ['openssl -sha256', 'openssl-sha256']);
  row('job sha256, checkpoint 64 MiB / 5 s', 'job-sha256', ['sha256sum', 'sha256sum']);
  row('job sha256, checkpoint 64 MiB / 5 s', 'job-sha256', ['node loop', 'node-loop']);
  row('job sha256, checkpoint 1 GiB', 'job-sha256-ck1g', ['openssl -sha256', 'openssl-sha256']);
  row('openssl dgst -sha512', 'openssl-sha512');
  row('job sha512', 'job-sha512', ['openssl -sha512', 'openssl-sha512']);
  row('job sha256 + sha512 (one pass)', 'job-sha256+sha512', ['sha512 job', 'job-sha512']);
  row('openssl dgst -md5', 'openssl-md5');
  row('job md5', 'job-md5', ['openssl -md5', 'openssl-md5']);
  row('job sha256', 'job-sha256-m');
  row('job crc64nvme', 'job-crc64nvme');
  row('3 jobs md5, sha256, crc64nvme (sum)', 'three-jobs');
  row('job md5+sha256+crc64nvme (one pass)', 'job-multi', ['3 jobs', 'three-jobs']);
  row('S3 GetObject, body drained (no hash)', 's3-get', null, s3Bytes);
  row('rclone cat > /dev/null (no hash)', 'rclone-cat', null, s3Bytes);
  row('rclone hashsum sha256 --download', 'rclone-hashsum', null, s3Bytes);
  row('job sha256, file', 'job-sha256-f', null, s3Bytes);
  row(
    'job sha256, S3 object (local s3rver)',
    'job-s3-sha256',
    ['file job', 'job-sha256-f'],
    s3Bytes,
  );
  row('job sha256, S3 object (local s3rver)', 'job-s3-sha256', ['bare GET', 's3-get'], s3Bytes);
  row(
    'job sha256, S3 object (local s3rver)',
    'job-s3-sha256',
    ['rclone cat', 'rclone-cat'],
    s3Bytes,
  );
  row(
    'job sha256, S3 object (local s3rver)',
    'job-s3-sha256',
    ['rclone hashsum', 'rclone-hashsum'],
    s3Bytes,
  );
  printTable(
    ['case', 'min s', 'median s', 'MB/s', 's/GiB', 'peer', 'ratio to peer', 'RSS MiB'],
    rows,
  );

  console.log('\ntargets');
  const targets = [];
  const target = (label, value, goal) => value !== undefined && targets.push([label, value, goal]);
  const perRound = (a, b, f) => {
    const x = r.seconds(a);
    const y = r.seconds(b);
    const each = x.map((s, i) => f(s, y[i])).filter(Number.isFinite);
    return each.length ? { median: median(each), worst: each } : undefined;
  };
  const pct = (v) =>
    v
      ? `${(median(v.worst) * 100).toFixed(1)} % (rounds: ${v.worst.map((x) => (x * 100).toFixed(1)).join(', ')})`
      : undefined;
  const ratio = perRound('job-sha256', 'openssl-sha256', (job, peer) => peer / job);
  target(
    'job sha256 vs openssl dgst -sha256',
    ratio && `${fmtRatio(ratio.median)} (rounds: ${ratio.worst.map(fmtRatio).join(', ')})`,
    '>= 1.00x',
  );
  target(
    'checkpoint overhead, 64 MiB vs 1 GiB',
    pct(perRound('job-sha256', 'job-sha256-ck1g', (a, b) => (a - b) / b)),
    '<= 3 %',
  );
  const cpu = (name) => r.get(name).map((e) => e.workerCpu + e.pgCpu);
  const cpu64 = cpu('job-sha256');
  const cpu1g = cpu('job-sha256-ck1g');
  if (cpu1g.length) {
    const each = cpu1g.map((b, i) => (cpu64[i] - b) / b);
    target('  the same in CPU time (worker + PG)', pct({ worst: each }), 'load-independent view');
  }
  const slower = r
    .seconds('job-sha512')
    .map((s, i) => Math.max(s, r.seconds('job-sha256')[i] ?? 0));
  if (slower.length) {
    const both = r.seconds('job-sha256+sha512');
    const each = both.map((s, i) => (s - slower[i]) / slower[i]);
    target('sha256+sha512 vs the slower alone', pct({ worst: each }), '<= 15 %');
  }
  target(
    'md5+sha256+crc64nvme one pass vs 3 jobs',
    pct(perRound('job-multi', 'three-jobs', (a, b) => (a - b) / b)),
    'below 0 %: one pass saves',
  );
  target(
    'S3 job vs file job (same bytes)',
    (() => {
      const v = perRound('job-s3-sha256', 'job-sha256-f', (a, b) => b / a);
      return v && `${fmtRatio(v.median)} of the file job's throughput`;
    })(),
    '',
  );
  for (const [peer, label, goal] of [
    ['rclone-cat', 'S3 job vs rclone cat (bare read)', '>= 0.90x'],
    ['rclone-hashsum', 'S3 job vs rclone hashsum --download', '>= 1.00x'],
  ]) {
    const v = perRound('job-s3-sha256', peer, (job, other) => other / job);
    target(label, v && `${fmtRatio(v.median)} (rounds: ${v.worst.map(fmtRatio).join(', ')})`, goal);
  }
  const rss = [...r.series.values()]
    .flat()
    .map((e) => e.rss)
    .filter((x) => x !== undefined);
  target(
    'worker peak RSS (any job)',
    rss.length ? `${Math.max(...rss).toFixed(0)} MiB` : undefined,
    'bounded: chunk x buffers, not file size',
  );
  printTable(['', 'measured (median of rounds)', 'target'], targets);

  phaseReport(r);
  s3CpuReport(r, s3Bytes);
}

/** CPU per GiB of the S3 client (peer or worker) and of the S3 server, medians over rounds. */
function s3CpuReport(r, s3Bytes) {
  const rows = [];
  for (const [label, series] of [
    ['S3 GetObject, body drained (SDK)', 's3-get'],
    ['rclone cat > /dev/null', 'rclone-cat'],
    ['rclone hashsum sha256 --download', 'rclone-hashsum'],
    ['job sha256, S3 object', 'job-s3-sha256'],
  ]) {
    const runs = r.get(series).filter((e) => e.serverCpu !== undefined);
    if (runs.length === 0) continue;
    const perGiB = (f) => {
      const each = runs.map((e) => (f(e) * GiB) / s3Bytes);
      return `${median(each).toFixed(2)} (${each.map((x) => x.toFixed(2)).join(' ')})`;
    };
    rows.push([label, perGiB((e) => e.clientCpu), perGiB((e) => e.serverCpu)]);
  }
  if (rows.length === 0) return;
  console.log(
    '\nCPU of the S3 case (s/GiB, median and rounds; client = the peer process or the worker)',
  );
  printTable(['case', 'client CPU s/GiB', 'S3 server CPU s/GiB'], rows);
}

/** Where each job's time went, from the worker's 'finished' log record (medians over rounds, ms). */
function phaseReport(r) {
  const rows = [];
  for (const [name, runs] of r.series) {
    const traced = runs.filter((e) => e.trace?.phases);
    if (!name.startsWith('job-') || traced.length === 0) continue;
    const m = (f) => median(traced.map(f)).toFixed(0);
    const p = (e) => e.trace.phases;
    rows.push([
      name.replace(/^job-/, ''),
      m((e) => e.pickupMs),
      m((e) => p(e).opened),
      m((e) => p(e).started - p(e).opened),
      m((e) => p(e).hashed - p(e).started),
      m((e) => e.trace.ms.hash),
      m((e) => e.trace.ms.readWait),
      m((e) => e.trace.ms.writeWait),
      m(
        (e) =>
          p(e).hashed - p(e).started - e.trace.ms.hash - e.trace.ms.readWait - e.trace.ms.writeWait,
      ),
      `${m((e) => e.trace.checkpoints.count)} / ${m((e) => e.trace.checkpoints.ms)}`,
      m((e) => p(e).finished - p(e).hashed),
      m((e) => e.seconds * 1000),
      m((e) => e.workerCpu * 1000),
      m((e) => e.pgCpu * 1000),
    ]);
  }
  if (rows.length === 0) return;
  console.log(
    '\nwhere the job time goes (ms, median of rounds; from the worker log; loop = read/hash/write pipeline)',
  );
  printTable(
    [
      'job',
      'pickup',
      'lease→open',
      'start',
      'loop',
      'hash',
      'read wait',
      'ckpt wait',
      'loop other',
      'ckpts n / ms',
      'verify+final',
      'job',
      'worker CPU',
      'PG CPU',
    ],
    rows,
  );
  console.log(
    '  pickup = createdAt → startedAt (queue); lease→open = lease, hashers, source open; start = fenced start write (sent beside the first chunk: ~0);\n' +
      '  hash = awaiting updateAsync; read wait = chunk not read yet when hashing was done; ckpt wait = a checkpoint\n' +
      '  still committing when the next was due; loop other = JS between chunks; ckpts = committed checkpoints and the\n' +
      '  sum of their commit times (behind the hashing); verify+final = source re-check and the final fenced write;\n' +
      '  worker CPU / PG CPU = CPU time of the worker process (all threads) and of its PostgreSQL backends during the job.',
  );
}

async function cleanUp(common, admin, Redis, s3) {
  await Promise.all(
    common.pairs.flatMap((pair) => [stopProcess(pair.worker), stopProcess(pair.api)]),
  );
  for (const pair of common.pairs)
    await admin.query(`DROP DATABASE IF EXISTS ${pair.database} WITH (FORCE)`);
  await admin.end();
  const redis = new Redis(REDIS_URL);
  for (const pair of common.pairs) await deleteKeys(redis, pair.prefix);
  redis.disconnect();
  if (s3) await s3.stop();
}

main().catch((err) => {
  console.error(`[bench] ${err.stack ?? err}`);
  process.exit(1);
});
