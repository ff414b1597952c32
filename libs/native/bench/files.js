#!/usr/bin/env node
// `npm run bench:files`: files per second hashing a tree of small files (sha256, page cache warm),
// @hashq/native's hashFiles against `rclone hashsum SHA256 <dir>` and
// `find <dir> -type f -print0 | xargs -0 -P2 sha256sum` (the floor), in the same run, round by round.
// Every tool lists the tree itself (hashFiles: readdir of each folder, then one call per folder).
// Wall time and CPU time (user + system of the process and its children: steadier than wall time
// on a loaded machine) are both printed, with ratios.
// A timing script, not a test: it checks only that hashFiles' digests equal sha256sum's.
//
// Environment:
//   BENCH_FILES   number of files (default 100000), 4 KiB each, 1000 per folder, written once to
//                 .data/bench-files/<N> (kept for reuse)
//   BENCH_REPEAT  rounds (default 3); the table shows the medians
//   BENCH_BATCH   names per hashFiles call (default 2000; the call splits it across 2 pool tasks)
const { spawnSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const lib = require('../dist/index.js');

const N = Number(process.env.BENCH_FILES ?? 100000);
const REPEAT = Number(process.env.BENCH_REPEAT ?? 3);
const BATCH = Number(process.env.BENCH_BATCH ?? 2000);
const PER_DIR = 1000;
const SIZE = 4096;
const ROOT = path.join(__dirname, '..', '..', '..', '.data', 'bench-files', String(N));

function makeTree() {
  const done = path.join(ROOT, '.complete');
  if (fs.existsSync(done)) return;
  console.log(`[bench] writing ${N} files of ${SIZE} bytes under ${ROOT}`);
  fs.rmSync(ROOT, { recursive: true, force: true });
  for (let i = 0; i < N; i++) {
    const dir = path.join(ROOT, `d${Math.floor(i / PER_DIR)}`);
    if (i % PER_DIR === 0) fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `f${i}.bin`), randomBytes(SIZE));
  }
  fs.writeFileSync(done, '');
}

const now = () => Number(process.hrtime.bigint()) / 1e9;

/** The tree through hashFiles: readdir per folder, then its names in calls of BATCH. */
async function runNative() {
  const started = now();
  const cpu0 = process.cpuUsage();
  const rootFd = fs.openSync(ROOT, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  const digests = new Map();
  let failed = 0;
  try {
    const folders = fs.readdirSync(ROOT, { withFileTypes: true }).filter((e) => e.isDirectory());
    for (const folder of folders) {
      const names = fs
        .readdirSync(path.join(ROOT, folder.name), { withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => `${folder.name}/${e.name}`);
      for (let at = 0; at < names.length; at += BATCH) {
        const part = names.slice(at, at + BATCH);
        const r = await lib.hashFiles(rootFd, part, ['sha256']);
        for (let i = 0; i < part.length; i++) {
          if (r.ok(i)) digests.set(part[i], r.digest(i));
          else failed++;
        }
      }
    }
  } finally {
    fs.closeSync(rootFd);
  }
  const cpu = process.cpuUsage(cpu0);
  return {
    seconds: now() - started,
    cpu: (cpu.user + cpu.system) / 1e6,
    files: digests.size,
    failed,
    digests,
  };
}

/** Wall seconds, CPU seconds of the command and its children (bash's `times`), stdout. */
function runShell(script) {
  const started = now();
  const r = spawnSync('bash', ['-c', `${script}\ntimes >&2`], {
    maxBuffer: 1 << 30,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`${script} failed: ${r.stderr}`);
  // the second line of `times`: the children's user and system time, e.g. "0m1.234s 0m0.567s"
  const line = r.stderr.trim().split('\n').at(-1);
  const cpu = [...line.matchAll(/(\d+)m([\d.]+)s/g)].reduce(
    (t, m) => t + Number(m[1]) * 60 + Number(m[2]),
    0,
  );
  return { seconds: now() - started, cpu, stdout: r.stdout };
}

const runRclone = () => runShell(`rclone hashsum SHA256 ${JSON.stringify(ROOT)}`);
const runXargs = () =>
  runShell(
    `cd ${JSON.stringify(ROOT)} && find . -type f -name '*.bin' -print0 | xargs -0 -P2 sha256sum`,
  );

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  makeTree();
  for (const tool of ['rclone', 'sha256sum', 'xargs']) {
    if (spawnSync('which', [tool]).status !== 0) throw new Error(`${tool} is missing`);
  }
  runXargs(); // warm the page cache and the dentries
  const times = { hashFiles: [], rclone: [], xargs: [] };
  const cpus = { hashFiles: [], rclone: [], xargs: [] };
  let check;
  for (let round = 0; round < REPEAT; round++) {
    const n = await runNative();
    if (n.files !== N || n.failed) throw new Error(`hashFiles: ${n.files} ok, ${n.failed} failed`);
    times.hashFiles.push(n.seconds);
    cpus.hashFiles.push(n.cpu);
    const rc = runRclone();
    times.rclone.push(rc.seconds);
    cpus.rclone.push(rc.cpu);
    const x = runXargs();
    times.xargs.push(x.seconds);
    cpus.xargs.push(x.cpu);
    check = { native: n.digests, sums: x.stdout };
    console.log(
      `round ${round + 1}: hashFiles ${n.seconds.toFixed(2)} s, rclone ${times.rclone[round].toFixed(2)} s, ` +
        `xargs -P2 sha256sum ${x.seconds.toFixed(2)} s`,
    );
  }
  // every digest of the last round against sha256sum's line for the same file
  let mismatches = 0;
  for (const line of check.sums.split('\n')) {
    if (!line) continue;
    const [hex, name] = [line.slice(0, 64), line.slice(66).replace(/^\.\//, '')];
    if (check.native.get(name)?.toString('hex') !== hex) mismatches++;
  }
  if (mismatches) throw new Error(`${mismatches} digests differ from sha256sum`);
  const ours = median(times.hashFiles);
  const oursCpu = median(cpus.hashFiles);
  console.log(
    `\n${N} files of ${SIZE} B, sha256, warm cache, ${REPEAT} rounds (medians); ` +
      `${require('node:os').cpus().length} CPUs (${require('node:os').cpus()[0].model})`,
  );
  console.log(
    `load average ${require('node:os')
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  console.log('| tool | wall s | files/s | hashFiles vs it | CPU s | hashFiles vs it (CPU) |');
  console.log('|---|--:|--:|--:|--:|--:|');
  const rows = [
    ['@hashq/native hashFiles', ours, oursCpu],
    ['rclone hashsum SHA256 (default checkers)', median(times.rclone), median(cpus.rclone)],
    ['find -print0 \\| xargs -0 -P2 sha256sum', median(times.xargs), median(cpus.xargs)],
  ];
  for (const [name, s, c] of rows) {
    console.log(
      `| ${name} | ${s.toFixed(2)} | ${Math.round(N / s)} | ${(s / ours).toFixed(2)}× | ` +
        `${c.toFixed(2)} | ${(c / oursCpu).toFixed(2)}× |`,
    );
  }
  console.log(`digests checked against sha256sum: ${N}, 0 differ`);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
