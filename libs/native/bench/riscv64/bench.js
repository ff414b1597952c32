'use strict';
/**
 * npm run bench:riscv64 — executed instructions per byte of every algorithm
 * on rv64gc, counted exactly by qemu's instruction-counting TCG plugin
 * (tests/plugin/insn.c, built from Debian's qemu source package by
 * scripts/riscv64/insn-plugin.sh) under `qemu-riscv64 -cpu sifive-u54`,
 * beside eBASH's SiFive U54 cycles/byte (bench/data/ebash-u54.json).
 *   long: (insn(16384 B) − insn(4096 B)) / 12288
 *   64 B: (insn(64 B) − insn(no hash call)) / 64 — the whole one-shot hash
 *         (init, absorb, padding, finalization), like eBASH's crypto_hash.
 * On an in-order U54 every instruction takes at least one cycle, so these
 * figures are a floor for our cycles/byte there.
 * `--zbb` adds a what-if column: the same C built with -march=rv64gc_zbb
 * (the compiler's own use of Zbb rotations, andn, rev8; no code of ours is
 * Zbb-specific yet) counted under `-cpu rv64,zbb=true`.
 * Writes .data/riscv64/bench.json; prints a Markdown table.
 */
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const repo = path.resolve(__dirname, '..', '..', '..', '..');
const native = path.join(repo, 'libs', 'native');
const data = path.join(repo, '.data', 'riscv64');
const plugin = path.join(data, 'libinsn.so');
const VARIANTS = {
  rv64gc: { exe: path.join(data, 'hashbytes'), march: [], cpu: 'sifive-u54' },
  zbb: { exe: path.join(data, 'hashbytes-zbb'), march: ['-march=rv64gc_zbb'], cpu: 'rv64,zbb=true' },
};
const ebash = require('../data/ebash-u54.json');

/** our name → eBASH's primitive name (final-round versions) */
const EBASH_NAMES = {
  sha256: 'sha256', sha512: 'sha512', shake128: 'shake128',
  asconhashv12: 'asconhashv12', asconhashav12: 'asconhashav12',
  asconxofv12: 'asconxofv12', asconxofav12: 'asconxofav12',
  xoodyak: 'xoodyakv1', esch256: 'esch256v2', esch384: 'esch384v2',
  romulush: 'romulush', photonbeetlehash256: 'photonbeetlehash256rate32v1',
};
const LONG = [4096, 16384];

function build(v) {
  execFileSync('bash', [path.join(repo, 'scripts', 'riscv64', 'insn-plugin.sh'), plugin], { stdio: 'inherit' });
  const src = path.join(native, 'src');
  const sources = fs.readdirSync(src).filter((f) => f.endsWith('.c')).map((f) => path.join(src, f));
  const inputs = [...fs.readdirSync(src).map((f) => path.join(src, f)), path.join(__dirname, 'hashbytes.c')];
  const built = fs.existsSync(v.exe) ? fs.statSync(v.exe).mtimeMs : 0;
  if (inputs.every((f) => fs.statSync(f).mtimeMs < built)) return;
  // the addon's flags (binding.gyp): -O3, no -march beyond rv64gc
  execFileSync('riscv64-linux-gnu-gcc', ['-std=c11', '-O3', ...v.march, '-static', '-I', src, '-o', v.exe,
    path.join(__dirname, 'hashbytes.c'), ...sources], { stdio: 'inherit' });
}

/** Instructions executed by one run (the plugin prints "insns: N"). */
function count(v, algorithm, bytes) {
  // the plugin writes its count to qemu's log (stderr with -d plugin)
  const r = spawnSync('qemu-riscv64', ['-cpu', v.cpu, '-plugin', `${plugin},inline=off`,
    '-d', 'plugin', v.exe, algorithm, String(bytes)], { encoding: 'utf8' });
  const m = /insns: (\d+)/.exec(r.stderr);
  if (r.status !== 0 || !m) throw new Error(`no instruction count for ${algorithm} ${bytes}: ${r.stderr}`);
  return Number(m[1]);
}

function measure(v, algorithm) {
  const none = count(v, algorithm, -1);
  const [a, b] = LONG.map((n) => count(v, algorithm, n));
  return { long: (b - a) / (LONG[1] - LONG[0]), b64: (count(v, algorithm, 64) - none) / 64 };
}

const fmt = (x, d = 1) => (x === undefined ? '—' : x.toFixed(d));

function main() {
  const zbb = process.argv.includes('--zbb');
  build(VARIANTS.rv64gc);
  if (zbb) build(VARIANTS.zbb);
  const list = execFileSync('qemu-riscv64', ['-cpu', 'sifive-u54', VARIANTS.rv64gc.exe, '--list'], { encoding: 'utf8' });
  const rows = [];
  for (const [name, implementation] of list.trim().split('\n').map((l) => l.split(' '))) {
    const r = { algorithm: name, implementation, ...measure(VARIANTS.rv64gc, name) };
    if (zbb) r.zbb = measure(VARIANTS.zbb, name);
    const e = EBASH_NAMES[name];
    r.ebash = e && { name: e, long: ebash.tables.long[e].median, b64: ebash.tables['64'][e].median };
    rows.push(r);
    process.stderr.write(`${name} `);
  }
  process.stderr.write('\n');
  const out = {
    method: 'qemu-riscv64 -cpu sifive-u54 (rv64gc) + TCG plugin libinsn (a callback per executed instruction), static binary, gcc -O3',
    compiler: execFileSync('riscv64-linux-gnu-gcc', ['--version'], { encoding: 'utf8' }).split('\n')[0],
    qemu: execFileSync('qemu-riscv64', ['--version'], { encoding: 'utf8' }).split('\n')[0],
    long: `slope ${LONG[0]} → ${LONG[1]} bytes`,
    ebashSource: ebash.source,
    rows,
  };
  fs.writeFileSync(path.join(data, 'bench.json'), JSON.stringify(out, null, 1) + '\n');
  console.log(`rv64gc executed instructions per byte (${out.method}; long = ${out.long})`);
  console.log(`eBASH: median cycles/byte on a SiFive U54 (${ebash.machine})\n`);
  const zh = zbb ? ' Zbb (-march) long | Zbb 64 B |' : '';
  console.log(`| algorithm | path | insn/B long | insn/B 64 B | eBASH U54 c/B long | eBASH U54 c/B 64 B | ratio long | ratio 64 B |${zh}`);
  console.log(`|---|---|--:|--:|--:|--:|--:|--:|${zbb ? '--:|--:|' : ''}`);
  for (const r of rows) {
    const e = r.ebash;
    console.log(`| ${r.algorithm}${e && e.name !== r.algorithm ? ` (${e.name})` : ''} | ${r.implementation} | ${fmt(r.long)} | ${fmt(r.b64)} | ` +
      `${fmt(e?.long, 2)} | ${fmt(e?.b64, 2)} | ${e ? fmt(r.long / e.long, 2) : '—'} | ${e ? fmt(r.b64 / e.b64, 2) : '—'} |` +
      (zbb ? ` ${fmt(r.zbb.long)} | ${fmt(r.zbb.b64)} |` : ''));
  }
  console.log('\nratio = our instructions / eBASH cycles (< 1: our floor is below their measured cycles)');
}

main();
