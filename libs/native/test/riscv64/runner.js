'use strict';
/**
 * Plain-Node test runner for the riscv64 addon (jest is too slow under qemu):
 *   node runner.js kat <katDir> [every] [paths]
 *                                          KAT files (all vectors; every N-th also streamed;
 *                                          paths: only algorithms on these code paths, e.g. zbb,zknh)
 *   node runner.js props [seed] [cases]    resumability properties
 *   node runner.js write-states <file> [seed]
 *   node runner.js check-states <file>     states written on the other arch
 * Prints "N passed, M failed" and exits 1 on any failure. Run it with
 * PREBUILDS_ONLY=1 so node-gyp-build loads prebuilds/linux-<arch>/.
 */
const { lib, Tally, runKats, runProperties, writeStates, checkStates } = require('./checks');

const [mode, a, b, c] = process.argv.slice(2);
const t = new Tally();
const impls = [...new Set(lib.algorithms().map((x) => lib.implementation(x.name)))].join(',');
console.log(
  `${mode} on ${process.arch} node ${process.version}: ${lib.algorithms().length} algorithms (${impls})`,
);
switch (mode) {
  case 'kat':
    runKats(a, Number(b ?? 1), t, c ? new Set(c.split(',')) : undefined);
    break;
  case 'props': {
    const seed = Number(a ?? Date.now() % 1e9);
    console.log(`  seed ${seed}`);
    runProperties(seed, Number(b ?? 4), t);
    break;
  }
  case 'write-states':
    writeStates(a, Number(b ?? 1));
    t.check(true, 'written');
    break;
  case 'check-states':
    checkStates(a, t);
    break;
  default:
    console.error('usage: runner.js kat|props|write-states|check-states ...');
    process.exit(2);
}
console.log(`${t.passed} passed, ${t.failed} failed`);
process.exitCode = t.failed === 0 ? 0 : 1;
