// What the end-to-end benchmarks (bench:e2e, bench:jobs, bench:batch, bench:sessions) share:
// building the apps once, a free loopback port for each server they start, starting and stopping
// the API and worker processes, their peak RSS and CPU from /proc, and the clean-up of a run's
// database URL and BullMQ keys.
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');

const ROOT = path.join(__dirname, '..', '..');

/** What a run of the API and the worker needs built: both apps, the migrations, the C addon. */
const APP_BUILD_FILES = [
  'dist/apps/api/main.js',
  'dist/apps/worker/main.js',
  'dist/libs/database/src/migrate.js',
  'libs/native/dist/index.js',
];

/** Runs `npm run build` when one of `files` (relative to the repository) is missing. */
function ensureBuilt(files) {
  if (files.every((file) => fs.existsSync(path.join(ROOT, file)))) return;
  console.log('[bench] building (npm run build)');
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
}

/** A TCP port free on 127.0.0.1 right now. */
async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Starts `node [nodeArgs] script` in the repository with `env`; stderr is inherited, stdout
 * ignored unless `stdout: 'pipe'`. An exit before stopProcess() is reported under `name`.
 */
function startProcess(name, script, env, { nodeArgs = [], stdout = 'ignore' } = {}) {
  const child = spawn(process.execPath, [...nodeArgs, script], {
    cwd: ROOT,
    env,
    stdio: ['ignore', stdout, 'inherit'],
  });
  child.on('exit', (code, signal) => {
    if (!child.stopping) console.error(`[bench] ${name} exited (${code ?? signal})`);
  });
  return child;
}

/** SIGTERM, and wait for the exit (a child that is gone already is skipped). */
async function stopProcess(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  child.stopping = true;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** Waits until GET <url>/health answers ok, polling every 250 ms `attempts` times. */
async function waitHealthy(url, attempts = 240) {
  for (let i = 0; i < attempts; i++) {
    try {
      if ((await fetch(`${url}/health`)).ok) return;
    } catch {
      // starting
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`API ${url} did not become healthy`);
}

/** Resets the peak resident set size (VmHWM) of a process; Linux >= 4.0. */
function resetPeakRss(pid) {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    // not allowed: the peak then covers the process's whole life
  }
}

/** Peak resident set size (VmHWM) of a live process, in MiB. */
function peakRssMiB(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)[1]) / 1024;
}

/** The fields of /proc/<pid>/stat after the command name (index 0: field 3), or null once exited. */
function statFields(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').pop().split(' ');
  } catch {
    return null;
  }
}

/**
 * CPU time (user + system, all threads, in seconds) of processes; a load-independent cost: on a
 * shared machine wall times vary with the neighbours, the CPU a job costs much less. Tick
 * resolution (getconf CLK_TCK, 100 here).
 */
function cpuSeconds(pids) {
  let ticks = 0;
  for (const fields of pids.map(statFields)) {
    if (fields) ticks += Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14, 15)
  }
  return ticks / 100;
}

/**
 * Minor page faults of processes so far (field 10 of stat, all threads): memory the allocator
 * gave back to the kernel and took again costs one each, ~µs apiece and more inside a VM.
 */
function minorFaults(pids) {
  let faults = 0;
  for (const fields of pids.map(statFields)) if (fields) faults += Number(fields[7]);
  return faults;
}

/** CPU seconds of this process's children that have ended and been waited for (spawnSync peers). */
function childrenCpuSeconds() {
  const fields = statFields('self');
  return (Number(fields[13]) + Number(fields[14])) / 100; // cutime, cstime (fields 16 and 17)
}

/** `serverUrl` (a PostgreSQL URL) with its database replaced by `database`. */
function databaseUrlFor(serverUrl, database) {
  return Object.assign(new URL(serverUrl), { pathname: `/${database}` }).toString();
}

/** Deletes the Redis keys under a BullMQ prefix (`<prefix>:*`) through an ioredis connection. */
async function deleteKeys(redis, prefix) {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}

/**
 * The node options the API runs with wherever the project starts it (package.json start:api,
 * scripts/start.sh, docker/): young-generation semispaces of 4 MiB, so that a scavenge copies what
 * outlived ~3 MiB of allocation, not ~11 MiB as with V8's default (docs/digest-sessions.md, "GC
 * pauses").
 */
const API_NODE_ARGS = ['--max-semi-space-size=4'];

/**
 * What every bench gives the API it starts: keys off (a bench is a local, loopback-only client, and
 * a key check is one cached hash compare, not what a bench measures) and the rate limiter off
 * unless HASHQ_RATE_LIMIT is set (a bench sends thousands of requests a minute from one address).
 */
const BENCH_API_ENV = {
  HOST: '127.0.0.1',
  HASHQ_AUTH: 'off',
  HASHQ_RATE_LIMIT: process.env.HASHQ_RATE_LIMIT ?? '0',
};

module.exports = {
  API_NODE_ARGS,
  APP_BUILD_FILES,
  BENCH_API_ENV,
  ensureBuilt,
  freePort,
  startProcess,
  stopProcess,
  waitHealthy,
  resetPeakRss,
  peakRssMiB,
  cpuSeconds,
  minorFaults,
  statFields,
  childrenCpuSeconds,
  databaseUrlFor,
  deleteKeys,
};
