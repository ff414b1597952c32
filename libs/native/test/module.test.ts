/**
 * The package loads from CommonJS `require` and ESM `import` by its name
 * (self-reference through package.json "exports"), from the compiled dist/
 * (`npm test` runs `tsc -p .` first).
 */
import { spawnSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import { availableParallelism } from 'node:os';
import * as path from 'node:path';

import { fromStatus, native } from '../lib/addon';
import { configuredAsyncLimit } from '../lib/async';

const root = path.join(__dirname, '..');
const expected = crypto.createHash('sha256').update('abc').digest('hex');

function node(args: string[]): string {
  const env = { ...process.env };
  delete env.HASHQ_NATIVE_IMPL;
  const r = spawnSync(process.execPath, args, { cwd: root, env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout.trim();
}

const probe = `[
  m.hash('sha256', 'abc').toString('hex'),
  typeof m.createHasher, typeof m.Hasher.restore, m.HashType.Sha256, m.HashType[0],
  new m.Hash(m.HashType.Sha256).updateSync(Buffer.from('abc')).digestSync().toString('hex'),
  new m.BusyError().code, m.algorithms().length > 0,
].join(' ')`;
const want = `${expected} function function 1 Sha1 ${expected} ERR_BUSY true`;

test('CommonJS require', () => {
  expect(node(['-e', `const m = require('@hashq/native'); console.log(${probe})`])).toBe(want);
});

test('ESM import (named and default exports are the same module instance)', () => {
  const code = `import * as m from '@hashq/native'; import d from '@hashq/native';
    import { createRequire } from 'node:module';
    const c = createRequire(import.meta.url)('@hashq/native');
    if (d.Hasher !== m.Hasher || c.Hasher !== m.Hasher) throw new Error('two instances');
    const missing = Object.keys(c).filter((k) => !(k in m));
    if (missing.length) throw new Error('not re-exported: ' + missing);
    console.log(${probe});`;
  expect(node(['--input-type=module', '-e', code])).toBe(want);
});

test('type declarations are shipped', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  expect(pkg.types).toBe('dist/index.d.ts');
  expect(pkg.exports['.'].types).toBe('./dist/index.d.ts');
  expect(fs.existsSync(path.join(root, pkg.types))).toBe(true);
});

test('binding.gyp compiles every C file of src/ (a missing one breaks the load)', () => {
  const gyp = fs.readFileSync(path.join(root, 'binding.gyp'), 'utf8');
  const listed = [...gyp.matchAll(/"(src\/[^"]+\.c)"/g)].map((m) => m[1]).sort();
  const present = fs
    .readdirSync(path.join(root, 'src'))
    .filter((f) => f.endsWith('.c'))
    .map((f) => `src/${f}`)
    .sort();
  expect(listed).toEqual(present);
});

test('loads in worker threads beside the main thread (one dispatch per process)', () => {
  const code = `const { Worker } = require('node:worker_threads');
    const m = require('@hashq/native');
    const src = "const m = require('@hashq/native'); const { parentPort } = require('node:worker_threads');" +
      "m.createHasher('sha256').updateAsync(Buffer.alloc(1 << 20, 1)).then(() => parentPort.postMessage(m.hash('sha256', 'abc').toString('hex')));";
    const big = m.createHasher('sha256');
    const pending = big.updateAsync(Buffer.alloc(8 << 20, 2));
    Promise.all([0, 1].map(() => new Promise((ok, fail) => {
      const w = new Worker(src, { eval: true });
      w.once('message', ok); w.once('error', fail);
    }))).then(async (r) => { await pending; console.log(r.join(' ')); });`;
  expect(node(['-e', code])).toBe(`${expected} ${expected}`);
});

/**
 * Twenty worker threads, each running `work` (with `m`, the package) and terminated 0-4 ms after
 * it returns, while what it started still runs on the pool: the process must live on.
 */
function expectTerminatedWorkersHarmless(work: string): void {
  const code = `const { Worker } = require('node:worker_threads');
    const src = "const m = require('@hashq/native'); const { parentPort } = require('node:worker_threads');" +
      ${JSON.stringify(work)} + "parentPort.postMessage('started');";
    (async () => {
      for (let r = 0; r < 20; r++) {
        const w = new Worker(src, { eval: true });
        await new Promise((ok) => w.once('message', ok));
        await new Promise((ok) => setTimeout(ok, r % 5));
        await w.terminate();
      }
      console.log('alive');
    })();`;
  expect(node(['-e', code])).toBe('alive');
}

test('worker threads terminated while their async updates are queued or running: the process lives on', () => {
  // Each worker queues a dozen multi-MiB updates (more than the async limit:
  // some wait, some run, some pair) and is terminated a few ms later; the
  // pending completions then arrive while the worker's JavaScript can no
  // longer run. This used to abort the process (napi_throw in teardown).
  expectTerminatedWorkersHarmless(
    "for (let i = 0; i < 12; i++) m.createHasher(i % 3 ? 'sha256' : 'sha1').updateAsync(Buffer.alloc((3 << 20) + i, i));",
  );
});

test('an async callback that throws: the error reaches uncaughtException, the other callbacks still run', () => {
  // Through the internal addon API (the package's own callbacks never throw):
  // limit 1, three 1 MiB updates of different contexts; with SHA-NI two of
  // them run as a pair, so a throw in one callback must not swallow the other.
  const code = `const { native } = require('./dist/addon.js');
    const m = require('@hashq/native');
    native.setAsyncLimit(1);
    const seen = [];
    process.on('uncaughtException', (e) => seen.push('uncaught ' + e.message));
    const id = m.findAlgorithm('sha256').id;
    const data = Buffer.alloc(1 << 20, 1);
    const ctx = [0, 1, 2].map(() => { const c = new Uint8Array(native.limits.ctxSize); native.init(c, id, undefined, 0); return c; });
    native.updateAsync(ctx[0], data, () => seen.push('a'));
    native.updateAsync(ctx[1], data, () => { seen.push('b'); throw new Error('boom'); });
    native.updateAsync(ctx[2], data, () => seen.push('c'));
    setTimeout(() => { console.log('stuck ' + JSON.stringify(seen)); process.exit(1); }, 60000).unref();
    const wait = setInterval(() => {
      if (seen.length < 4) return;
      clearInterval(wait);
      const out = Buffer.alloc(32);
      const same = ctx.every((c) => (native.final(c, out, 32), out.equals(m.hash('sha256', data))));
      console.log(JSON.stringify(seen.sort()), same, native.asyncStats().inFlight);
    }, 5);`;
  expect(node(['-e', code])).toBe('["a","b","c","uncaught boom"] true 0');
});

test('worker threads terminated while they feed: the process lives on', () => {
  // Each worker feeds a few hashers many chunks (their pool tasks still running), waits on
  // backlogs, and is terminated a few ms later: the tasks' ends and their signals then arrive
  // while the worker's JavaScript can no longer run.
  expectTerminatedWorkersHarmless(
    "const hs = [0, 1, 2].map((i) => m.createHasher(i ? 'sha256' : 'sha1'));" +
      'for (let i = 0; i < 40; i++) hs.forEach((h) => h.feed(Buffer.alloc((1 << 20) + i, i)));' +
      'hs.forEach((h) => h.fedBelow(1 << 20)); hs[0].flushFed();',
  );
});

test('feed and feedWait: bad arguments throw ERR_BAD_ARGUMENT; a waiter that throws reaches uncaughtException', () => {
  // Through the internal addon API: what the Hasher never passes.
  const code = `const { native } = require('./dist/addon.js');
    const m = require('@hashq/native');
    const ctx = new Uint8Array(native.limits.ctxSize);
    native.init(ctx, m.findAlgorithm('sha256').id, undefined, 0);
    const codes = [];
    const attempt = (f) => { try { f(); codes.push('none'); } catch (e) { codes.push(e.code); } };
    attempt(() => native.feed(new Uint8Array(8), Buffer.alloc(1)));
    attempt(() => native.feed(new Uint8Array(native.limits.ctxSize), Buffer.alloc(1)));
    attempt(() => native.feed(ctx, 'text'));
    attempt(() => native.feed(ctx, {}));
    for (const below of [-1, 0.5, NaN, Infinity, 2 ** 60, '1', undefined])
      attempt(() => native.feedWait(ctx, below, () => {}));
    attempt(() => native.feedWait(ctx, 1, 'not a function'));
    const seen = [];
    process.on('uncaughtException', (e) => seen.push('uncaught ' + e.message));
    const data = Buffer.alloc(8 << 20, 1);
    native.feed(ctx, data);
    native.feedWait(ctx, 0, () => { seen.push('a'); throw new Error('boom'); });
    native.feedWait(ctx, 0, () => seen.push('b'));
    setTimeout(() => { console.log('stuck ' + JSON.stringify(seen)); process.exit(1); }, 60000).unref();
    const wait = setInterval(() => {
      if (seen.length < 3) return;
      clearInterval(wait);
      const out = Buffer.alloc(32);
      native.final(ctx, out, 32);
      console.log(codes.join(' '), JSON.stringify(seen.sort()), out.equals(m.hash('sha256', data)));
    }, 5);`;
  const bad = 'ERR_BAD_ARGUMENT';
  expect(node(['-e', code])).toBe(
    `${bad} ERR_STATE_INVALID ${bad} ${bad} ${Array(8).fill(bad).join(' ')} ["a","b","uncaught boom"] true`,
  );
});

// The kernel is the oracle: field 41 of /proc/self/task/<tid>/stat is the
// thread's scheduling policy (0 SCHED_OTHER, 5 SCHED_IDLE).
(process.platform === 'linux' ? test : test.skip)(
  'setPoolIdle: the pool threads that hash run at SCHED_IDLE from then on, the main thread is left',
  () => {
    const code = `const m = require('@hashq/native'); const fs = require('fs'); const crypto = require('crypto');
      const policies = () => fs.readdirSync('/proc/self/task').map((tid) => {
        const stat = fs.readFileSync('/proc/self/task/' + tid + '/stat', 'utf8');
        return [Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[38])];
      });
      const idle = () => policies().filter(([, p]) => p === 5).map(([tid]) => tid);
      const data = crypto.randomBytes(8 << 20);
      (async () => {
        const h1 = m.createHasher('sha256'); await h1.updateAsync(data);
        const before = idle().length;
        const applied = m.setPoolIdle();
        const h2 = m.createHasher('sha256'); await h2.updateAsync(data);
        const after = idle();
        const mainPolicy = policies().find(([tid]) => tid === process.pid)[1];
        const right = [h1, h2].every((h) => Buffer.from(h.digest()).toString('hex') === crypto.createHash('sha256').update(data).digest('hex'));
        console.log(JSON.stringify({ before, applied, idle: after.length > 0, mainPolicy, right }));
      })();`;
    expect(JSON.parse(node(['-e', code]))).toEqual({
      before: 0,
      applied: true,
      idle: true,
      mainPolicy: 0,
      right: true,
    });
  },
);

describe('HASHQ_ASYNC_THREADS', () => {
  const cpus = availableParallelism();

  test('defaults to the pool size capped at the CPUs; an explicit value wins', () => {
    expect(configuredAsyncLimit({})).toBe(Math.min(4, cpus));
    expect(configuredAsyncLimit({ UV_THREADPOOL_SIZE: '1' })).toBe(1);
    expect(configuredAsyncLimit({ UV_THREADPOOL_SIZE: '64' })).toBe(cpus);
    expect(configuredAsyncLimit({ HASHQ_ASYNC_THREADS: '3', UV_THREADPOOL_SIZE: '1' })).toBe(3);
    expect(configuredAsyncLimit({ HASHQ_ASYNC_THREADS: '' })).toBe(Math.min(4, cpus));
  });

  test.each(['0', 'abc', '1025', '2.5', ' 2', '-1'])('rejects %p with ERR_BAD_ARGUMENT', (raw) => {
    expect(() => configuredAsyncLimit({ HASHQ_ASYNC_THREADS: raw })).toThrow(
      expect.objectContaining({
        code: 'ERR_BAD_ARGUMENT',
        message: expect.stringContaining('HASHQ_ASYNC_THREADS'),
      }),
    );
  });

  test('is applied when the package loads; a bad value fails the load with its code', () => {
    const code = `const m = require('@hashq/native'); console.log(m.asyncStats().limit)`;
    const run = (value: string) =>
      spawnSync(process.execPath, ['-e', code], {
        cwd: root,
        env: { ...process.env, HASHQ_ASYNC_THREADS: value },
        encoding: 'utf8',
      });
    expect(run('1').stdout.trim()).toBe('1');
    const bad = run('zero');
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain('ERR_BAD_ARGUMENT');
  });
});

describe('one set of names and numbers in C, the addon and TypeScript', () => {
  const header = fs.readFileSync(path.join(root, 'src', 'hashq.h'), 'utf8');

  test('the version of hashq.h is the package version, and the addon reports it', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
    const part = (name: string): string =>
      new RegExp(`#define HASHQ_VERSION_${name} (\\d+)`).exec(header)![1];
    expect(`${part('MAJOR')}.${part('MINOR')}.${part('PATCH')}`).toBe(pkg.version);
    expect(/#define HASHQ_VERSION_STRING "([^"]+)"/.exec(header)![1]).toBe(pkg.version);
    expect(native.version).toBe(pkg.version);
  });

  test('the addon exports enum hq_status by name, and each status becomes the error of that code', () => {
    const inHeader = Object.fromEntries(
      [...header.matchAll(/HQ_(ERR_\w+) = (\d+)/g)].map((m) => [m[1], Number(m[2])]),
    );
    expect(native.status).toEqual(inHeader);
    for (const [code, status] of Object.entries(native.status)) {
      const err = fromStatus(status, 'message');
      expect({ code: err.code, name: err.name === 'HashqError' }).toEqual({ code, name: false });
    }
  });

  test('STATE_FORMAT.md names only codes the library throws', () => {
    const doc = fs.readFileSync(path.join(root, 'STATE_FORMAT.md'), 'utf8');
    const named = new Set([...doc.matchAll(/`(ERR_\w+)`/g)].map((m) => m[1]));
    expect(named.size).toBeGreaterThan(0);
    for (const code of named) expect(Object.keys(native.status)).toContain(code);
  });

  test('the size limits of hashq.h', () => {
    const limit = (name: string): number =>
      Number(new RegExp(`#define ${name} (\\d+)`).exec(header)![1]);
    expect(native.limits).toEqual({
      ctxSize: limit('HQ_CTX_SIZE'),
      stateMax: limit('HQ_STATE_MAX'),
      outputMax: 2 ** Number(/#define HQ_OUTLEN_MAX \(1u << (\d+)\)/.exec(header)![1]),
      defaultOutputMax: limit('HQ_DEFAULT_OUTLEN_MAX'),
      customMax: limit('HQ_CUSTOM_MAX'),
    });
  });
});
