#!/usr/bin/env node
// `npm run bench:sessions`: digest sessions (tus PATCHes hashed as they arrive, states committed
// to PostgreSQL) against the cheapest possible peer, a node:http sink that only hashes each body
// with Node's crypto and keeps nothing (scripts/bench-sessions/sink.cjs):
//   - one client pushes BENCH_BYTES (1 GiB) in 8 MiB PATCHes over loopback, sha256, then
//     sha256 + sha512 + crc64nvme (the sink: sha256 + sha512 + zlib.crc32). The same client
//     (one keep-alive connection to each, the same 8 MiB buffer, the same headers) alternates
//     between the session and the sink every BENCH_SEGMENT_PATCHES PATCHes (1: every PATCH), the one that
//     goes first alternating too, so both see the same moments of a machine shared with other
//     jobs; ratio of a round = sink time / session time; BENCH_REPEAT rounds, median and worst
//     (targets: >= 0.9x and >= 0.8x); also the CPU time per PATCH of each side's servers (the
//     sink; the API and its PostgreSQL backends), from /proc, a cost the load does not change,
//     and the minor page faults per PATCH of the sink and the API: a plain node:http server's
//     allocator gives the memory of its freed bodies back to the kernel and faults it in again,
//     at ~10 us a page in the VMs measured, so the sink's speed moves with them (see
//     BENCH_SINK_TUNABLES and docs/digest-sessions.md, "The sink's page faults");
//   - BENCH_SESSIONS (1,000) concurrent sessions of 64 KiB in 4 PATCHes each (sha256):
//     sessions/s, the CPU per session of the API, its PostgreSQL backends and this client, PATCH
//     latency p50/p99/max; after BENCH_SESSIONS_WARM_UP untimed rounds of the same (the JIT
//     compiling the small requests' path beside a timed round made it a measure of a cold API;
//     after one round the API's CPU per session still fell 15-20 % in the next),
//     and followed by one more round, measured alike, with the "own" ticker below;
//   - at the end, the peak RSS (VmHWM) of the API and the sinks over the whole run.
// The API runs with API_LOOP_PRIORITY=realtime unless that variable says otherwise: its event loop
// at SCHED_FIFO above its own helper threads (docs/digest-sessions.md, "The event loop in real
// time"); it needs root or CAP_SYS_NICE, and without it the header says where the loop ran.
// The API's event-loop delay (p50, p99, max) is measured in the API process itself
// (scripts/bench-sessions/loop-lag.cjs, preloaded): raw (monitorEventLoopDelay), and "own", net of
// the time its main thread waited for a CPU (Linux schedstat) - what the API's work caused. "own"
// only in the small sessions' last round: its 1 ms ticker (a /proc read each) loads the thread it
// measures (~1 ms of the API's main thread per 8 MiB PATCH in the uploads, a handicap the sink
// does not have; in the small sessions a longer raw maximum), so the timed round runs without it.
// Beside the API, an idle event loop (scripts/bench-sessions/idle-loop.cjs, the same preload,
// scheduled as the API's loop) gives the machine's floor in the same rounds: the delay an event
// loop with nothing to do sees meanwhile.
// A timing script, not a test: it prints numbers and asserts only that the digests are right.
//
// The API runs as its own process (dist/apps/api/main.js, default checkpoint settings) on a
// database of its own (hashq_bench_sessions_<random>, dropped at the end).
//
// Environment:
//   BENCH_BYTES     bytes of the single-client upload (default 1 GiB)
//   BENCH_REPEAT    rounds of the single-client cases (default 3)
//   BENCH_SEGMENT_PATCHES  PATCHes in a row to one side before switching (default 1)
//   BENCH_SESSIONS  concurrent small sessions (default 1000)
//   BENCH_SESSIONS_WARM_UP  untimed rounds of them before the timed one (default 2)
//   BENCH_CASES     which parts run: "upload,sessions" (default both); "upload-sha256" or
//                   "upload-multi" for one of the two uploads
//   BENCH_API_NODE_ARGS  node options for the API, after the project's own (API_NODE_ARGS), e.g.
//                   "--cpu-prof --cpu-prof-dir=/tmp/prof"
//   BENCH_API_STDOUT  a file that receives the API's stdout (e.g. with "--trace-gc-nvp")
//   BENCH_SINK_TUNABLES  GLIBC_TUNABLES of the sinks alone, e.g. "glibc.malloc.trim_threshold=
//                   67108864:glibc.malloc.top_pad=16777216:glibc.malloc.mmap_threshold=67108864":
//                   the peer with an allocator that keeps what it frees (default: none, plain)
//   HASHQ_RATE_LIMIT  passed to the API (default 0: the rate limiter off)
//   API_LOOP_PRIORITY  passed to the API (default realtime; high is the API's own default)
//   DATABASE_URL    server to use (the database part is replaced)
const { spawn } = require('node:child_process');
const { createHash, randomBytes } = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');

const {
  API_NODE_ARGS,
  BENCH_API_ENV,
  cpuSeconds,
  ensureBuilt,
  freePort,
  minorFaults,
  peakRssMiB,
  statFields,
} = require('./bench-e2e/setup.cjs');
const { printTable, median, fmtRatio } = require('./bench-e2e/table.cjs');

const ROOT = path.join(__dirname, '..');
const MiB = 1024 ** 2;
const BYTES = Number(process.env.BENCH_BYTES ?? 1024 * MiB);
const REPEAT = Number(process.env.BENCH_REPEAT ?? 3);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 1000);
const SESSIONS_WARM_UP = Number(process.env.BENCH_SESSIONS_WARM_UP ?? 2);
const SEGMENT_PATCHES = Number(process.env.BENCH_SEGMENT_PATCHES ?? 1);
const LOOP_PRIORITY = process.env.API_LOOP_PRIORITY ?? 'realtime';
const NATIVE = path.join(ROOT, 'libs', 'native');
const CASES = (process.env.BENCH_CASES ?? 'upload,sessions').split(',');
const PATCH_BYTES = 8 * MiB;
const SMALL_BYTES = 64 * 1024;
const SMALL_PATCHES = 4;
const SERVER_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/hashq';
const TUS = { 'Tus-Resumable': '1.0.0' };
const SINK_TUNABLES = process.env.BENCH_SINK_TUNABLES ?? '';

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

/** Thread `tid`'s nice value and real-time priority (fields 19 and 40 of /proc/<tid>/stat; 0: none),
 * and how the header names them; nice '?' off Linux. */
function threadScheduling(tid) {
  const fields = statFields(tid);
  const nice = fields?.[16] ?? '?';
  const fifo = Number(fields?.[37] ?? 0);
  return { nice, fifo, name: fifo > 0 ? `SCHED_FIFO ${fifo}` : `nice ${nice}` };
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

/** PATCHes of `body` from `from` to `to` (bytes) to `url`; seconds, and the last answer. */
async function pushRange(agent, url, from, to, body) {
  const started = process.hrtime.bigint();
  let last;
  for (let offset = from; offset < to; offset += body.length) {
    const piece = body.subarray(0, Math.min(body.length, to - offset));
    last = await expectStatus(patch(agent, url, offset, piece), 204, 'PATCH');
  }
  return { seconds: Number(process.hrtime.bigint() - started) / 1e9, last };
}

/**
 * One round: BYTES to a new session and to the sink, SEGMENT_PATCHES PATCHes to one, then to the
 * other, the first of each pair alternating; seconds of each side, the CPU seconds its server
 * processes used meanwhile (`pids.api`, `pids.sink`: the API with its PostgreSQL backends, the
 * sink) and the minor page faults of the first of them, the session's final answer.
 */
async function uploadRound(agents, apiUrl, sinkUrl, algorithms, body, sinkFirst, pids) {
  const url = await createSession(agents.api, apiUrl, BYTES, algorithms);
  const seconds = { api: 0, sink: 0 };
  const cpu = { api: 0, sink: 0 };
  const faults = { api: 0, sink: 0 };
  let last;
  const segment = SEGMENT_PATCHES * body.length;
  for (let from = 0, i = 0; from < BYTES; from += segment, i++) {
    const to = Math.min(BYTES, from + segment);
    const sides = (i % 2 === 0) === sinkFirst ? ['sink', 'api'] : ['api', 'sink'];
    for (const side of sides) {
      const server = [pids[side][0]]; // the API or the sink, without PostgreSQL's backends
      const cpu0 = cpuSeconds(pids[side]);
      const faults0 = minorFaults(server);
      const run = await pushRange(agents[side], side === 'api' ? url : sinkUrl, from, to, body);
      cpu[side] += cpuSeconds(pids[side]) - cpu0;
      faults[side] += minorFaults(server) - faults0;
      seconds[side] += run.seconds;
      if (side === 'api') last = run.last;
    }
  }
  return { ...seconds, cpu, faults, last };
}

const lagCell = (figures) => (figures ? `${figures.p50} / ${figures.p99} / ${figures.max}` : '-');
const lagCells = (lag) => [lagCell(lag.raw), lagCell(lag.own)];

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
        ...BENCH_API_ENV,
        API_LOOP_PRIORITY: LOOP_PRIORITY,
      },
      {
        nodeArgs: [
          ...API_NODE_ARGS,
          ...(process.env.BENCH_API_NODE_ARGS ?? '').split(' ').filter(Boolean),
          '--require',
          path.join(__dirname, 'bench-sessions', 'loop-lag.cjs'),
        ],
        ipc: true,
      },
    );
    children.push(api);
    if (process.env.BENCH_API_STDOUT) {
      const out = fs.createWriteStream(process.env.BENCH_API_STDOUT);
      api.lines.on('line', (line) => out.write(`${line}\n`));
    }
    api.lines.on('line', (line) => {
      if (/"level":(5|6)0/.test(line)) process.stderr.write(`[api] ${line}\n`); // errors, fatal
    });
    const apiUrl = `http://127.0.0.1:${port}`;
    const sinks = {};
    const sinkPids = {};
    for (const algorithms of ['sha256', 'sha256,sha512,crc64nvme']) {
      const sink = startProcess(
        path.join(__dirname, 'bench-sessions', 'sink.cjs'),
        [algorithms],
        SINK_TUNABLES ? { GLIBC_TUNABLES: SINK_TUNABLES } : {},
      );
      children.push(sink);
      sinkPids[algorithms] = sink.pid;
      sinks[algorithms] =
        `http://127.0.0.1:${(await firstLine(sink, (record) => record.port)).port}/sink`;
    }
    await waitListening(apiUrl);
    const idle = startProcess(
      path.join(__dirname, 'bench-sessions', 'idle-loop.cjs'),
      [],
      {},
      {
        nodeArgs: ['--require', path.join(__dirname, 'bench-sessions', 'loop-lag.cjs')],
        ipc: true,
      },
    );
    children.push(idle);
    // the idle loop scheduled as the API's: its nice value, its real-time priority if it has one
    const apiLoop = threadScheduling(api.pid);
    try {
      os.setPriority(idle.pid, Number(apiLoop.nice));
    } catch {
      // no right to raise a priority: the API could not either (its nice is printed)
    }
    if (apiLoop.fifo > 0) require(NATIVE).setThreadFifo(idle.pid, apiLoop.fifo);
    /** The API and its PostgreSQL backends. */
    const serverPids = async () => [
      api.pid,
      ...(
        await admin.query('SELECT pid FROM pg_stat_activity WHERE datname = $1', [database])
      ).rows.map((row) => row.pid),
    ];

    const load = () =>
      os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ');
    console.log(
      `\nhashq bench:sessions: node ${process.version}, ${os.cpus().length} x ${os.cpus()[0]?.model ?? '?'}, ` +
        `load average ${load()} (1, 5, 15 min)`,
    );
    console.log(
      `API event loop at ${apiLoop.name} (API_LOOP_PRIORITY=${LOOP_PRIORITY}), ` +
        `an idle loop at ${threadScheduling(idle.pid).name}, the bench at nice ${os.getPriority(0)}`,
    );
    console.log(`sinks' GLIBC_TUNABLES (BENCH_SINK_TUNABLES): ${SINK_TUNABLES || 'none (plain)'}`);
    const targets = [];
    const lagHeader = ['API loop delay p50/p99/max ms', 'own (net of CPU waits) ms'];

    const uploadCases = [
      ['sha256', ['sha256'], 0.9, 'upload-sha256'],
      ['sha256 + sha512 + crc64nvme', ['sha256', 'sha512', 'crc64nvme'], 0.8, 'upload-multi'],
    ].filter(([, , , name]) => CASES.includes('upload') || CASES.includes(name));
    if (uploadCases.length > 0) {
      const body = randomBytes(PATCH_BYTES);
      const whole = createHash('sha256');
      for (let offset = 0; offset < BYTES; offset += body.length)
        whole.update(body.subarray(0, Math.min(body.length, BYTES - offset)));
      const expected = whole.digest('hex');
      const agents = {
        api: new http.Agent({ keepAlive: true, maxSockets: 1 }),
        sink: new http.Agent({ keepAlive: true, maxSockets: 1 }),
      };
      // Untimed: JIT warm-up, connections.
      await uploadRound(agents, apiUrl, sinks.sha256, ['sha256'], body, false, {
        api: [api.pid],
        sink: [sinkPids.sha256],
      });
      const pids = { api: await serverPids() }; // the pool's connections exist after the warm-up

      const rows = [];
      for (const [label, algorithms, goal] of uploadCases) {
        const runs = {
          api: [],
          sink: [],
          ratio: [],
          cpuApi: 0,
          cpuSink: 0,
          faultsApi: 0,
          faultsSink: 0,
        };
        api.send('reset');
        for (let round = 1; round <= REPEAT; round++) {
          process.stderr.write(`[bench] ${label}: round ${round}/${REPEAT}, load ${load()}\n`);
          const sinkUrl = sinks[algorithms.join(',')];
          const run = await uploadRound(
            agents,
            apiUrl,
            sinkUrl,
            algorithms,
            body,
            round % 2 === 0,
            {
              ...pids,
              sink: [sinkPids[algorithms.join(',')]],
            },
          );
          runs.cpuApi += run.cpu.api;
          runs.cpuSink += run.cpu.sink;
          runs.faultsApi += run.faults.api;
          runs.faultsSink += run.faults.sink;
          if (!run.last.headers['hashq-digest'].startsWith(`sha256="${expected}"`)) {
            throw new Error(
              `${label}: wrong sha256 ${run.last.headers['hashq-digest']} (expected ${expected})`,
            );
          }
          runs.api.push(run.api);
          runs.sink.push(run.sink);
          runs.ratio.push(run.sink / run.api);
        }
        const lag = await loopLag(api);
        const mbs = (seconds) => (BYTES / seconds / 1e6).toFixed(0);
        const worst = Math.min(...runs.ratio);
        const perPatch = (total) => (total * PATCH_BYTES) / (BYTES * REPEAT);
        const cpuPerPatch = (cpu) => perPatch(cpu * 1000).toFixed(1);
        rows.push([
          label,
          mbs(median(runs.sink)),
          mbs(median(runs.api)),
          fmtRatio(median(runs.ratio)),
          fmtRatio(worst),
          runs.ratio.map(fmtRatio).join(', '),
          `${cpuPerPatch(runs.cpuSink)} / ${cpuPerPatch(runs.cpuApi)}`,
          `${perPatch(runs.faultsSink).toFixed(0)} / ${perPatch(runs.faultsApi).toFixed(0)}`,
          ...lagCells(lag),
        ]);
        targets.push([
          `1 client, ${label}, vs the sink (median; worst)`,
          `${fmtRatio(median(runs.ratio))}; ${fmtRatio(worst)}`,
          `>= ${goal.toFixed(1)}x`,
        ]);
      }
      for (const agent of Object.values(agents)) agent.destroy();
      console.log(
        `\none client, ${BYTES / MiB} MiB in ${PATCH_BYTES / MiB} MiB PATCHes over loopback, ` +
          `alternating every ${SEGMENT_PATCHES} PATCHes with the sink; ${REPEAT} rounds; ratio = sink time / session time`,
      );
      printTable(
        [
          'algorithms',
          'sink MB/s',
          'session MB/s',
          'ratio (median)',
          'worst',
          'rounds',
          'CPU ms per PATCH, sink / API+PostgreSQL',
          'page faults per PATCH, sink / API',
          ...lagHeader,
        ],
        rows,
      );
    }

    if (CASES.includes('sessions')) {
      process.stderr.write(`[bench] ${SESSIONS} concurrent sessions, load ${load()}\n`);
      const manyAgent = new http.Agent({ keepAlive: true, maxSockets: SESSIONS });
      // Untimed: JIT warm-up of the small requests' path, the connections.
      for (let round = 0; round < SESSIONS_WARM_UP; round++) await smallSessions(manyAgent, apiUrl);
      // Two rounds, measured alike: the timed one with the raw delay alone, then one with the
      // "own" ticker too (its 1 ms /proc reads load the very thread they measure: the first
      // round's figures are the API's, the second's say what its own work was).
      const rounds = [];
      for (const window of ['reset', 'reset-own']) {
        // CPU of the API, its PostgreSQL backends (those the pool opens meanwhile count whole)
        // and this client while the sessions run
        const before = new Map((await serverPids()).map((pid) => [pid, cpuSeconds([pid])]));
        const client0 = process.cpuUsage();
        api.send(window);
        idle.send('reset');
        const many = await smallSessions(manyAgent, apiUrl);
        const lag = await loopLag(api);
        const { raw: floor } = await loopLag(idle);
        const client = process.cpuUsage(client0);
        const cpu = { api: cpuSeconds([api.pid]) - before.get(api.pid), pg: 0 };
        for (const pid of await serverPids())
          if (pid !== api.pid) cpu.pg += cpuSeconds([pid]) - (before.get(pid) ?? 0);
        rounds.push({ many, lag, floor, cpu, client: (client.user + client.system) / 1e6 });
      }
      const perSession = (seconds) => ((seconds * 1000) / SESSIONS).toFixed(2);
      manyAgent.destroy();
      console.log(
        `\n${SESSIONS} concurrent sessions, ${SMALL_BYTES / 1024} KiB each in ${SMALL_PATCHES} PATCHes ` +
          `(sha256; POST + PATCHes per session, all sessions at once; after ${SESSIONS_WARM_UP} untimed round(s)), load ${load()}`,
      );
      printTable(
        [
          'round',
          'sessions/s',
          'CPU ms per session: API / PostgreSQL / client',
          'PATCH p50 ms',
          'PATCH p99 ms',
          'PATCH max ms',
          ...lagHeader,
          'idle loop beside it ms',
        ],
        rounds.map(({ many, lag, floor, cpu, client }, i) => [
          i === 0 ? 'timed' : 'own ticker on',
          (SESSIONS / many.seconds).toFixed(0),
          `${perSession(cpu.api)} / ${perSession(cpu.pg)} / ${perSession(client)}`,
          many.p50.toFixed(1),
          many.p99.toFixed(1),
          many.max.toFixed(1),
          ...lagCells(lag),
          lagCell(floor),
        ]),
      );
      const [{ lag, floor }, { lag: diagnosed }] = rounds;
      targets.push([
        `${SESSIONS} sessions: API event-loop delay p99 / max (own, next round; an idle loop's max)`,
        `${lag.raw.p99} / ${lag.raw.max} ms (${diagnosed.own?.p99} / ${diagnosed.own?.max} ms; ${floor.max} ms)`,
        '< 20 ms',
      ]);
    }
    const sinkRss = Object.values(sinkPids).map((pid) => peakRssMiB(pid).toFixed(0));
    console.log(
      `\npeak RSS (VmHWM) over the whole run: API ${peakRssMiB(api.pid).toFixed(0)} MiB, ` +
        `sinks ${sinkRss.join(' / ')} MiB`,
    );
    console.log('\ntargets');
    printTable(['', 'measured', 'target'], targets);
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
