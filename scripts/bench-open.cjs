#!/usr/bin/env node
// `npm run bench:open`: CPU time per FileRoots.openRegularFile (+ close) and locateRegularFile, the
// JS walk alone against the native open, in the same process and run. BENCH_OPEN_FILES files of
// 4 KiB (default 2,000, in .data/bench-open/, kept for reuse) are opened BENCH_OPEN_ROUNDS times
// (default 5) by BENCH_OPEN_CONCURRENCY concurrent loops (default 16, as bench:jobs' clients).
// CPU = user + system of this process (the pool threads included) per open; the median round is
// printed. A timing script, not a test: it checks only that every open names the file it asked for.
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const FILES = Number(process.env.BENCH_OPEN_FILES ?? 2000);
const ROUNDS = Number(process.env.BENCH_OPEN_ROUNDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_OPEN_CONCURRENCY ?? 16);

const { FileRoots } = require(path.join(ROOT, 'dist/libs/sources/src/file-roots.js'));

function prepare(dir) {
  fs.mkdirSync(dir, { recursive: true });
  const files = [];
  for (let i = 0; i < FILES; i++) {
    const file = path.join(dir, `f-${String(i).padStart(6, '0')}.bin`);
    if (!fs.existsSync(file)) fs.writeFileSync(file, Buffer.alloc(4096, i & 0xff));
    files.push(file);
  }
  return files;
}

async function round(files, once) {
  let next = 0;
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < files.length) await once(files[next++]);
    }),
  );
  const used = process.cpuUsage(cpu);
  return {
    cpuUs: (used.user + used.system) / files.length,
    wallUs: Number(process.hrtime.bigint() - started) / 1000 / files.length,
  };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const dir = path.join(ROOT, '.data', 'bench-open');
  const files = prepare(dir);
  const real = fs.realpathSync(dir);
  const check = (want, got) => {
    if (got !== path.join(real, path.basename(want))) throw new Error(`${want} opened as ${got}`);
  };
  const cases = [];
  for (const native of [false, true]) {
    const roots = new FileRoots([dir], { native });
    const how = native ? 'native' : 'walk';
    cases.push([
      `openRegularFile + close (${how})`,
      async (file) => {
        const opened = await roots.openRegularFile(file);
        await opened.handle.close();
        check(file, opened.path);
      },
    ]);
    cases.push([
      `locateRegularFile (${how})`,
      async (file) => check(file, (await roots.locateRegularFile(file)).path),
    ]);
  }
  for (const [, once] of cases) await round(files.slice(0, 200), once); // warm-up
  // Rounds interleave the cases, so a change of load meets them all.
  const runs = cases.map(() => []);
  for (let r = 0; r < ROUNDS; r++)
    for (const [i, [, once]] of cases.entries()) runs[i].push(await round(files, once));
  console.table(
    cases.map(([name], i) => ({
      case: name,
      'CPU µs/open': median(runs[i].map((x) => x.cpuUs)).toFixed(1),
      'wall µs/open': median(runs[i].map((x) => x.wallUs)).toFixed(1),
    })),
  );
  const [load1] = require('node:os').loadavg();
  console.log(
    `${FILES} files × ${ROUNDS} rounds, concurrency ${CONCURRENCY}, load average ${load1.toFixed(2)}`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
