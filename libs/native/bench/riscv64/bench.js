'use strict';
/**
 * npm run bench:riscv64 — executed instructions per byte of every algorithm
 * on rv64gc, counted exactly by qemu's instruction-counting TCG plugin
 * (tests/plugin/insn.c, built from Debian's qemu source package by
 * scripts/riscv64/insn-plugin.sh) under `qemu-riscv64 -cpu sifive-u54`,
 * beside eBASH's SiFive U54 cycles/byte (bench/data/ebash-u54.json).
 *   long: (insn(16384 B) − insn(4096 B)) / 12288
 *   64 B: (insn(64 B) − insn(no hash call)) / 64 — the whole one-shot hash
 *         (init, absorb, padding, finalization), like eBASH's crypto_hash;
 *         the message is 8-byte aligned (as Node's Buffers are), and again
 *         at an odd address (the paths that read whole words fall back).
 * On an in-order U54 every instruction takes at least one cycle, so these
 * figures are a floor for our cycles/byte there.
 * Each algorithm is counted on every path the addon has for it: rv64gc
 * (`-cpu sifive-u54`, no extensions), zbb (`-cpu rv64,zbb=true,zknh=false`)
 * and zknh (`-cpu rv64,zbb=true,zknh=true`), the path dispatch picks on
 * that CPU at load time; a path row is printed where it differs from the
 * one before. The core is built as the addon is (-O3, *_zbb.c and
 * *_zknh.c with their own -march).
 * Writes .data/riscv64/bench.json; prints a Markdown table.
 */
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const repo = path.resolve(__dirname, '..', '..', '..', '..');
const native = path.join(repo, 'libs', 'native');
const data = path.join(repo, '.data', 'riscv64');
const plugin = path.join(data, 'libinsn.so');
const exe = path.join(data, 'hashbytes');
/** path name → the qemu CPU on which dispatch picks it */
const CPUS = {
  rv64gc: 'sifive-u54',
  zbb: 'rv64,zbb=true,zknh=false',
  zknh: 'rv64,zbb=true,zknh=true',
};
/** -march of the files built for an extension (binding.gyp does the same) */
const MARCH = [
  [/_zbb\.c$/, ['-march=rv64gc_zbb']],
  [/_zknh\.c$/, ['-march=rv64gc_zbb_zknh']],
];
const ebash = require('../data/ebash-u54.json');

/** our name → eBASH's primitive name (final-round versions) */
const EBASH_NAMES = {
  sha256: 'sha256',
  sha512: 'sha512',
  shake128: 'shake128',
  asconhashv12: 'asconhashv12',
  asconhashav12: 'asconhashav12',
  asconxofv12: 'asconxofv12',
  asconxofav12: 'asconxofav12',
  xoodyak: 'xoodyakv1',
  esch256: 'esch256v2',
  esch384: 'esch384v2',
  romulush: 'romulush',
  photonbeetlehash256: 'photonbeetlehash256rate32v1',
};
const LONG = [4096, 16384];

function build() {
  execFileSync('bash', [path.join(repo, 'scripts', 'riscv64', 'insn-plugin.sh'), plugin], {
    stdio: 'inherit',
  });
  const src = path.join(native, 'src');
  const sources = [
    ...fs
      .readdirSync(src)
      .filter((f) => f.endsWith('.c'))
      .map((f) => path.join(src, f)),
    path.join(__dirname, 'hashbytes.c'),
  ];
  const inputs = [
    ...fs.readdirSync(src).map((f) => path.join(src, f)),
    path.join(__dirname, 'hashbytes.c'),
  ];
  const built = fs.existsSync(exe) ? fs.statSync(exe).mtimeMs : 0;
  if (inputs.every((f) => fs.statSync(f).mtimeMs < built)) return;
  // the addon's flags (binding.gyp): -O3, rv64gc except the extension files
  const objects = path.join(data, 'obj');
  fs.mkdirSync(objects, { recursive: true });
  const outs = sources.map((f) => {
    const out = path.join(objects, path.basename(f, '.c') + '.o');
    const march = (MARCH.find(([re]) => re.test(f)) ?? [null, []])[1];
    execFileSync(
      'riscv64-linux-gnu-gcc',
      ['-std=c11', '-O3', ...march, '-I', src, '-c', '-o', out, f],
      { stdio: 'inherit' },
    );
    return out;
  });
  execFileSync('riscv64-linux-gnu-gcc', ['-static', '-o', exe, ...outs], { stdio: 'inherit' });
}

/** Instructions executed by one run (the plugin prints "insns: N"). */
function count(cpu, algorithm, bytes, offset = 0) {
  // the plugin writes its count to qemu's log (stderr with -d plugin)
  const r = spawnSync(
    'qemu-riscv64',
    [
      '-cpu',
      cpu,
      '-plugin',
      `${plugin},inline=off`,
      '-d',
      'plugin',
      exe,
      algorithm,
      String(bytes),
      String(offset),
    ],
    { encoding: 'utf8' },
  );
  const m = /total insns: (\d+)/.exec(r.stderr);
  if (r.status !== 0 || !m)
    throw new Error(`no instruction count for ${algorithm} ${bytes}: ${r.stderr}`);
  return Number(m[1]);
}

function measure(cpu, algorithm) {
  const none = count(cpu, algorithm, -1);
  const [a, b] = LONG.map((n) => count(cpu, algorithm, n));
  return {
    long: (b - a) / (LONG[1] - LONG[0]),
    b64: (count(cpu, algorithm, 64) - none) / 64,
    // the same one-shot on a message that is not word-aligned
    b64odd: (count(cpu, algorithm, 64, 1) - none) / 64,
  };
}

/** algorithm → the implementation dispatch picks on this CPU */
function implementations(cpu) {
  const list = execFileSync('qemu-riscv64', ['-cpu', cpu, exe, '--list'], { encoding: 'utf8' });
  return new Map(
    list
      .trim()
      .split('\n')
      .map((l) => l.split(' ')),
  );
}

const fmt = (x, d = 1) => (x === undefined ? '—' : x.toFixed(d));

function main() {
  build();
  const impls = Object.fromEntries(
    Object.entries(CPUS).map(([p, cpu]) => [p, implementations(cpu)]),
  );
  const rows = [];
  for (const name of impls.rv64gc.keys()) {
    const e = EBASH_NAMES[name];
    const ebashRow = e && {
      name: e,
      long: ebash.tables.long[e].median,
      b64: ebash.tables['64'][e].median,
    };
    let previous;
    for (const [p, cpu] of Object.entries(CPUS)) {
      const implementation = impls[p].get(name);
      if (implementation === previous) continue;
      previous = implementation;
      rows.push({
        algorithm: name,
        path: p,
        implementation,
        ...measure(cpu, name),
        ebash: ebashRow,
      });
    }
    process.stderr.write(`${name} `);
  }
  process.stderr.write('\n');
  const out = {
    method:
      'qemu-riscv64 + TCG plugin libinsn (a callback per executed instruction), static binary, gcc -O3; ' +
      Object.entries(CPUS)
        .map(([p, cpu]) => `${p}: -cpu ${cpu}`)
        .join(', '),
    compiler: execFileSync('riscv64-linux-gnu-gcc', ['--version'], { encoding: 'utf8' }).split(
      '\n',
    )[0],
    qemu: execFileSync('qemu-riscv64', ['--version'], { encoding: 'utf8' }).split('\n')[0],
    long: `slope ${LONG[0]} → ${LONG[1]} bytes`,
    ebashSource: ebash.source,
    rows,
  };
  fs.writeFileSync(path.join(data, 'bench.json'), JSON.stringify(out, null, 1) + '\n');
  console.log(`riscv64 executed instructions per byte (${out.method}; long = ${out.long})`);
  console.log(`eBASH: median cycles/byte on a SiFive U54 (${ebash.machine})\n`);
  console.log(
    '| algorithm | path | implementation | insn/B long | insn/B 64 B | ' +
      'eBASH U54 c/B long | eBASH U54 c/B 64 B | ' +
      'ratio long | ratio 64 B | insn/B 64 B at offset 1 |',
  );
  console.log('|---|---|---|--:|--:|--:|--:|--:|--:|--:|');
  for (const r of rows) {
    const e = r.ebash;
    const name = `${r.algorithm}${e && e.name !== r.algorithm ? ` (${e.name})` : ''}`;
    console.log(
      `| ${name} | ${r.path} | ${r.implementation} | ` +
        `${fmt(r.long)} | ${fmt(r.b64)} | ${fmt(e?.long, 2)} | ${fmt(e?.b64, 2)} | ` +
        `${e ? fmt(r.long / e.long, 2) : '—'} | ${e ? fmt(r.b64 / e.b64, 2) : '—'} | ${fmt(r.b64odd)} |`,
    );
  }
  console.log(
    '\nratio = our instructions / eBASH cycles (< 1: our floor is below their measured cycles); ' +
      'a path row appears where dispatch on that CPU picks other code than on the one before',
  );
}

main();
