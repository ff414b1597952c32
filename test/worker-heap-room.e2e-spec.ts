/**
 * The worker's heap growing factor (apps/worker/src/heap-room.ts), in a child process that keeps
 * ~40 MB alive, as a worker does, and churns 64 KiB Buffers, as remote reads do: V8's full GCs,
 * counted by a PerformanceObserver, are the oracle. At the file factor (60 %) V8 marks again right
 * after each full GC; inside withRemoteHeapRoom (150 %) it does not; a factor on the command line
 * is left alone.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { REPO_ROOT } from './helpers/worker-process';

const HEAP_ROOM = join(REPO_ROOT, 'dist', 'apps', 'worker', 'src', 'heap-room.js');

const SCRIPT = `
const { initHeapGrowing, withRemoteHeapRoom } = require(${JSON.stringify(HEAP_ROOM)});
const { PerformanceObserver, constants } = require('node:perf_hooks');
initHeapGrowing();
globalThis.alive = Array.from({ length: 300000 }, (_, i) => ({ a: i, b: 'x' + i, c: [i] }));
let fullGcs = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) fullGcs++;
}).observe({ entryTypes: ['gc'] });
const turn = () => new Promise((resolve) => setImmediate(resolve));
async function churn() {
  for (let i = 0; i < 60000; i++) {
    Buffer.allocUnsafeSlow(65536)[0] = 1;
    if (i % 50 === 0) await turn();
  }
}
// Each phase starts from a full GC, so that V8's limit is the one the current factor gives.
async function count(run) {
  globalThis.gc();
  await new Promise((resolve) => setTimeout(resolve, 100));
  const before = fullGcs;
  await run();
  await new Promise((resolve) => setTimeout(resolve, 100));
  return fullGcs - before;
}
(async () => {
  const outside = await count(churn);
  const inside = await count(() => withRemoteHeapRoom(churn));
  const after = await count(churn);
  console.log(JSON.stringify({ outside, inside, after }));
})();
`;

async function fullGcs(nodeArgs: string[] = []) {
  const args = ['--expose-gc', ...nodeArgs, '-e', SCRIPT];
  const { stdout } = await promisify(execFile)(process.execPath, args, {
    timeout: 50_000,
  });
  return JSON.parse(stdout) as { outside: number; inside: number; after: number };
}

describe('worker heap growing factor', () => {
  it('is 60 % for files, 150 % while remote items are read, and 60 % again after', async () => {
    const { outside, inside, after } = await fullGcs();
    expect(outside).toBeGreaterThanOrEqual(10);
    expect(after).toBeGreaterThanOrEqual(10);
    expect(inside).toBeLessThanOrEqual(Math.floor(outside / 4));
  });

  it('leaves a factor given on the command line alone', async () => {
    const { outside, inside, after } = await fullGcs(['--heap-growing-percent=150']);
    expect(outside).toBeLessThanOrEqual(3);
    expect(inside).toBeLessThanOrEqual(3);
    expect(after).toBeLessThanOrEqual(3);
  });
});
