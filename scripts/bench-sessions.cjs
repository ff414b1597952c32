#!/usr/bin/env node
// `npm run bench:sessions`: digest sessions (tus PATCHes hashed as they arrive, states committed
// to PostgreSQL) against the cheapest possible peer, a node:http sink that only hashes each body
// with Node's crypto and keeps nothing (scripts/bench-sessions/sink.cjs):
//   - one client pushes BENCH_BYTES (1 GiB) in 8 MiB PATCHes over loopback, sha256, then
//     sha256 + sha512 + crc64nvme (the sink: sha256 + sha512 + zlib.crc32); API and sink run in
//     turns in every round; ratio = sink time / API time (>= 0.9x and >= 0.8x are the targets);
//   - BENCH_SESSIONS (1,000) concurrent sessions of 64 KiB in 4 PATCHes each (sha256):
//     sessions/s, PATCH latency p50/p99, and the API's event-loop delay (max, p99) measured in the
//     API process itself (scripts/bench-sessions/loop-lag.cjs, preloaded).
// A timing script, not a test: it prints numbers and asserts only that the digests are right.
//
// The API runs as its own process (dist/apps/api/main.js, default checkpoint settings) on a
// database of its own (hashq_bench_sessions_<random>, dropped at the end).
//
// Environment:
//   BENCH_BYTES     bytes of the single-client upload (default 1 GiB)
//   BENCH_REPEAT    rounds of the single-client cases (default 3)
//   BENCH_SESSIONS  concurrent small sessions (default 1000)
//   BENCH_CASES     which parts run: "upload,sessions" (default both)
//   BENCH_API_NODE_ARGS  node options for the API, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"
//   DATABASE_URL    server to use (the database part is replaced)
const { spawn } = require('node:child_process');
const { createHash, randomBytes } = require('node:crypto');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');

const { ensureBuilt, freePort } = require('./bench-e2e/setup.cjs');
const { printTable, median, fmtRatio } = require('./bench-e2e/table.cjs');

const ROOT = path.join(__dirname, '..');
const MiB = 1024 ** 2;
const BYTES = Number(process.env.BENCH_BYTES ?? 1024 * MiB);
const REPEAT = Number(process.env.BENCH_REPEAT ?? 3);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 1000);
const CASES = (process.env.BENCH_CASES ?? 'upload,sessions').split(',');
const PATCH_BYTES = 8 * MiB;
const SMALL_BYTES = 64 * 1024;
const SMALL_PATCHES = 4;
const SERVER_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/hashq';
const TUS = { 'Tus-Resumable': '1.0.0' };

/** One HTTP exchange: status, headers, body text. */
function exchange(agent, url, method, headers, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      agent,
      method,
      headers: body ? { ...headers, 'Content-Length': body.length } : headers,
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (piece) => (text += piece));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function expectStatus(promise, status, what) {
  const res = await promise;
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${res.text}`);
  return res;
}

/** A digest session on the API: POST, its URL. */
async function createSession(agent, api, length, algorithms) {
  const metadata = `algorithms ${Buffer.from(algorithms.join(',')).toString('base64')}`;
  const headers = { ...TUS, 'Upload-Length': String(length), 'Upload-Metadata': metadata };
  const res = await expectStatus(
    exchange(agent, `${api}/v1/digest-sessions`, 'POST', headers),
    201,
    'POST',
  );
  return `${api}${res.headers.location}`;
}

const patch = (agent, url, offset, body) =>
  exchange(
    agent,
    url,
    'PATCH',
    { ...TUS, 'Content-Type': 'application/offset+octet-stream', 'Upload-Offset': String(offset) },
    body,
  );

/** Pushes BYTES in PATCH_BYTES bodies to `url` (the API's session, or the sink); seconds of the PATCHes. */
async function push(url, body) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const started = process.hrtime.bigint();
  let last;
  for (let offset = 0; offset < BYTES; offset += body.length) {
    last = await expectStatus(
      patch(agent, url, offset, body.subarray(0, Math.min(body.length, BYTES - offset))),
      204,
      'PATCH',
    );
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  agent.destroy();
  return { seconds, last };
}

function startProcess(script, args, env, options = {}) {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), script, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit', ...(options.ipc ? ['ipc'] : [])],
  });
  child.lines = readline.createInterface({ input: child.stdout });
  return child;
}

function firstLine(child, match) {
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`process exited (${code}) before it was ready`)));
    child.lines.on('line', (line) => {
      try {
        const record = JSON.parse(line);
        if (match(record)) resolve(record);
      } catch {
        // not JSON
      }
    });
  });
}

async function stop(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

async function waitListening(url) {
  for (let i = 0; i < 240; i++) {
    try {
      if ((await fetch(`${url}/v1/digest-sessions`, { method: 'OPTIONS' })).status === 204) return;
    } catch {
      // starting
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`API ${url} did not start`);
}

function loopLag(api) {
  return new Promise((resolve) => {
    api.once('message', (message) => resolve(message.lag));
    api.send('lag');
  });
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

/** SESSIONS sessions at once, each POST + SMALL_PATCHES PATCHes in turn; every final digest checked. */
async function smallSessions(agent, api) {
  const body = randomBytes(SMALL_BYTES);
  const part = SMALL_BYTES / SMALL_PATCHES;
  const expected = createHash('sha256').update(body).digest('hex');
  const latencies = [];
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: SESSIONS }, async () => {
      const url = await createSession(agent, api, SMALL_BYTES, ['sha256']);
      let last;
      for (let offset = 0; offset < SMALL_BYTES; offset += part) {
        const t0 = process.hrtime.bigint();
        last = await expectStatus(
          patch(agent, url, offset, body.subarray(offset, offset + part)),
          204,
          'PATCH',
        );
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
      if (last.headers['hashq-digest'] !== `sha256="${expected}"`) {
        throw new Error(`wrong digest: ${last.headers['hashq-digest']}`);
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return {
    seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: Math.max(...latencies),
  };
}

async function main() {
  ensureBuilt([
    'dist/apps/api/main.js',
    'dist/libs/database/src/migrate.js',
    'libs/native/dist/index.js',
  ]);
  const { Client } = require('pg');
  const { runMigrations } = require(path.join(ROOT, 'dist/libs/database/src/migrate.js'));
  const database = `hashq_bench_sessions_${randomBytes(4).toString('hex')}`;
  const admin = new Client({
    connectionString: Object.assign(new URL(SERVER_URL), { pathname: '/postgres' }).toString(),
  });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  const databaseUrl = Object.assign(new URL(SERVER_URL), { pathname: `/${database}` }).toString();
  const children = [];
  // a throwaway key for the throwaway database (the states are sealed at rest)
  const stateKeys = `bench:${randomBytes(32).toString('base64')}`;
  try {
    await runMigrations({ databaseUrl, databaseSchema: 'public' }); // empty: nothing to seal
    const port = await freePort();
    const api = startProcess(
      'dist/apps/api/main.js',
      [],
      {
        PORT: String(port),
        DATABASE_URL: databaseUrl,
        LOG_LEVEL: 'warn',
        HASHQ_STATE_KEYS: stateKeys,
      },
      {
        nodeArgs: [
          ...(process.env.BENCH_API_NODE_ARGS ?? '').split(' ').filter(Boolean),
          '--require',
          path.join(__dirname, 'bench-sessions', 'loop-lag.cjs'),
        ],
        ipc: true,
      },
    );
    children.push(api);
    api.lines.on('line', (line) => {
      if (/"level":(5|6)0/.test(line)) process.stderr.write(`[api] ${line}\n`); // errors, fatal
    });
    const apiUrl = `http://127.0.0.1:${port}`;
    const sinks = {};
    for (const algorithms of ['sha256', 'sha256,sha512,crc64nvme']) {
      const sink = startProcess(
        path.join(__dirname, 'bench-sessions', 'sink.cjs'),
        [algorithms],
        {},
      );
      children.push(sink);
      sinks[algorithms] =
        `http://127.0.0.1:${(await firstLine(sink, (record) => record.port)).port}/sink`;
    }
    await waitListening(apiUrl);

    const body = randomBytes(PATCH_BYTES);
    const whole = createHash('sha256');
    for (let offset = 0; offset < BYTES; offset += body.length)
      whole.update(body.subarray(0, Math.min(body.length, BYTES - offset)));
    const expected = whole.digest('hex');
    const apiAgent = new http.Agent({ keepAlive: true });

    console.log(
      `\nhashq bench:sessions: ${BYTES} bytes in ${PATCH_BYTES / MiB} MiB PATCHes, ${REPEAT} rounds; ` +
        `${SESSIONS} sessions x ${SMALL_BYTES / 1024} KiB in ${SMALL_PATCHES} PATCHes; node ${process.version}, ` +
        `${os.cpus().length} x ${os.cpus()[0]?.model ?? '?'}, ` +
        `load ${os
          .loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}`,
    );
    const targets = [];
    if (CASES.includes('upload')) {
      // One untimed upload of each kind: JIT warm-up, connections.
      await push(await createSession(apiAgent, apiUrl, BYTES, ['sha256']), body);
      await push(sinks.sha256, body);
    }

    const rows = [];
    for (const [label, algorithms, goal] of CASES.includes('upload')
      ? [
          ['sha256', ['sha256'], 0.9],
          ['sha256 + sha512 + crc64nvme', ['sha256', 'sha512', 'crc64nvme'], 0.8],
        ]
      : []) {
      const runs = { api: [], sink: [], ratio: [], lag: [] };
      for (let round = 1; round <= REPEAT; round++) {
        process.stderr.write(`[bench] ${label}: round ${round}/${REPEAT}\n`);
        const url = await createSession(apiAgent, apiUrl, BYTES, algorithms);
        const sinkFirst = round % 2 === 0;
        const sink = sinkFirst ? await push(sinks[algorithms.join(',')], body) : undefined;
        api.send('reset');
        const run = await push(url, body);
        runs.lag.push((await loopLag(api)).max);
        const peer = sink ?? (await push(sinks[algorithms.join(',')], body));
        if (!run.last.headers['hashq-digest'].startsWith(`sha256="${expected}"`)) {
          throw new Error(
            `${label}: wrong sha256 ${run.last.headers['hashq-digest']} (expected ${expected})`,
          );
        }
        runs.api.push(run.seconds);
        runs.sink.push(peer.seconds);
        runs.ratio.push(peer.seconds / run.seconds);
      }
      const mbs = (seconds) => (BYTES / seconds / 1e6).toFixed(0);
      rows.push([
        `sink (node:http + crypto), ${label}`,
        median(runs.sink).toFixed(3),
        mbs(median(runs.sink)),
        '',
        '',
      ]);
      rows.push([
        `digest session, ${label}`,
        median(runs.api).toFixed(3),
        mbs(median(runs.api)),
        `${fmtRatio(median(runs.ratio))} (rounds: ${runs.ratio.map(fmtRatio).join(', ')})`,
        Math.max(...runs.lag).toFixed(1),
      ]);
      targets.push([
        `1 client, ${label}, vs the sink`,
        fmtRatio(median(runs.ratio)),
        `>= ${goal.toFixed(1)}x`,
      ]);
    }
    console.log(
      `\none client, ${BYTES / MiB} MiB in ${PATCH_BYTES / MiB} MiB PATCHes over loopback ` +
        `(medians of ${REPEAT} rounds; ratio = sink time / session time)`,
    );
    if (rows.length)
      printTable(['case', 'median s', 'MB/s', 'ratio to the sink', 'API loop delay max ms'], rows);

    if (CASES.includes('sessions')) {
      process.stderr.write(`[bench] ${SESSIONS} concurrent sessions\n`);
      const manyAgent = new http.Agent({ keepAlive: true, maxSockets: SESSIONS });
      api.send('reset');
      const many = await smallSessions(manyAgent, apiUrl);
      const lag = await loopLag(api);
      manyAgent.destroy();
      console.log(
        `\n${SESSIONS} concurrent sessions, ${SMALL_BYTES / 1024} KiB each in ${SMALL_PATCHES} PATCHes ` +
          '(sha256; POST + PATCHes per session, all sessions at once)',
      );
      printTable(
        [
          'sessions/s',
          'PATCH p50 ms',
          'PATCH p99 ms',
          'PATCH max ms',
          'API loop delay max ms',
          'API loop delay p99 ms',
        ],
        [
          [
            (SESSIONS / many.seconds).toFixed(0),
            many.p50.toFixed(1),
            many.p99.toFixed(1),
            many.max.toFixed(1),
            lag.max.toFixed(1),
            lag.p99.toFixed(1),
          ],
        ],
      );
      targets.push([
        `${SESSIONS} sessions: API event-loop delay max`,
        `${lag.max.toFixed(1)} ms`,
        '< 20 ms',
      ]);
    }
    console.log('\ntargets');
    printTable(['', 'measured', 'target'], targets);
    apiAgent.destroy();
  } finally {
    await Promise.all(children.map(stop));
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
