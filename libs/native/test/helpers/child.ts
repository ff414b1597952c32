/**
 * Runs in a child process (see spawn.ts): `node -r register.js child.ts
 * <command>`, JSON on stdin, JSON on stdout. The parent picks the code path
 * with HASHQ_NATIVE_IMPL.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import * as http from 'node:http';
import { Worker } from 'node:worker_threads';

import * as lib from '../../lib';
import { runKats } from './library';
import { scheduling } from './proc-stat';

interface SerializeJob {
  algorithm: string;
  message: string; // hex
  options?: { customization?: string; outputLength?: number };
}

interface ResumeJob {
  state: string; // hex
  rest: string; // hex
  length?: number;
}

function implementations(): Record<string, string> {
  return Object.fromEntries(lib.algorithms().map((a) => [a.name, a.implementation]));
}

/** updateAsync on inputs whose only reference is the addon's, with
 * collections forced while the pool reads them (needs --expose-gc). */
async function asyncUnderGc(): Promise<unknown> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  const results: boolean[] = [];
  for (let i = 0; i < 4; i++) {
    const size = 8 * lib.ASYNC_MIN_BYTES + i;
    const fill = (b: Uint8Array): Uint8Array => b.map((_, k) => (k * 31 + i) & 0xff);
    const want = lib.hash('sha256', fill(new Uint8Array(size)));
    const h = lib.createHasher('sha256');
    const p = h.updateAsync(fill(new Uint8Array(size)));
    for (let k = 0; k < 5; k++) {
      gc();
      new Uint8Array(size).fill(0xee); // reuse freed memory, if any
    }
    await p;
    results.push(h.digest().equals(want));
  }
  return results;
}

/** feed() of chunks whose only reference is the addon's, queued behind a long first chunk:
 * none may be collected before the pool has hashed it (needs --expose-gc). */
async function feedUnderGc(): Promise<unknown> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  const results: boolean[] = [];
  const lead = new Uint8Array(256 << 20).fill(7); // ~150 ms of hashing
  for (let i = 0; i < 2; i++) {
    const sizes = Array.from({ length: 24 }, (_, k) => 65536 + k * 4099 + i);
    const fill = (b: Uint8Array, k: number): Uint8Array => b.fill((k * 7 + i) & 0xff);
    const want = lib.hash(
      'sha256',
      Buffer.concat([lead, ...sizes.map((n, k) => fill(new Uint8Array(n), k))]),
    );
    const collected = new Set<number>();
    const registry = new FinalizationRegistry((k: number) => collected.add(k));
    const h = lib.createHasher('sha256');
    h.feed(lead);
    sizes.forEach((n, k) => {
      const chunk = fill(new Uint8Array(n), k);
      registry.register(chunk, k);
      h.feed(chunk);
    });
    for (let round = 0; round < 3; round++) {
      gc();
      for (const n of sizes) new Uint8Array(n).fill(0xee); // reuse freed memory, if any
      await new Promise((resolve) => setImmediate(resolve)); // finalizers run
    }
    const early = collected.size;
    await h.flushFed();
    results.push(early === 0 && h.digest().equals(want));
  }
  return results;
}

/** A node:http server that hashes request bodies with Node's crypto, with or without
 * retainFreedHeap first; over IPC it sends its port, then answers 'faults' with its count of
 * minor page faults, and 'stop' ends it with the digests it computed. */
async function heapServer(retain: boolean): Promise<unknown> {
  const retained = retain ? lib.retainFreedHeap(64 << 20) : false; // the API's default
  const digests: string[] = [];
  const server = http.createServer((req, res) => {
    const hash = createHash('sha256');
    req.on('data', (chunk: Buffer) => hash.update(chunk));
    req.on('end', () => {
      digests.push(hash.digest('hex'));
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.send?.({ port: (server.address() as { port: number }).port });
  await new Promise<void>((resolve) => {
    process.on('message', (message) => {
      if (message === 'faults') process.send?.({ faults: process.resourceUsage().minorPageFault });
      if (message === 'stop') resolve();
    });
  });
  server.closeAllConnections();
  server.close();
  process.disconnect?.();
  return { retained, digests };
}

/** The policy and real-time priority of each thread of this process, by tid. */
function threadPolicies(): Record<string, { policy: number; priority: number }> {
  const out: Record<string, { policy: number; priority: number }> = {};
  for (const tid of readdirSync('/proc/self/task'))
    out[tid] = scheduling(`/proc/self/task/${tid}/stat`);
  return out;
}

/** setThreadFifo on the main thread, then a worker thread started after it (SCHED_RESET_ON_FORK:
 * it begins at the normal policy), then the main thread back to normal. */
async function fifoThreads(priority: number): Promise<unknown> {
  const before = threadPolicies();
  const set = lib.setThreadFifo(0, priority);
  const worker = new Worker('setInterval(() => {}, 1000)', { eval: true });
  await once(worker, 'online');
  const during = threadPolicies();
  await worker.terminate();
  const reset = lib.setThreadFifo(process.pid, 0);
  return { pid: process.pid, set, reset, before, during, after: threadPolicies() };
}

async function run(command: string, input: unknown): Promise<unknown> {
  switch (command) {
    case 'async-gc':
      return asyncUnderGc();
    case 'feed-gc':
      return feedUnderGc();
    case 'heap-server':
      return heapServer((input as { retain: boolean }).retain);
    case 'fifo-threads':
      return fifoThreads((input as { priority: number }).priority);
    case 'kat':
      return { implementations: implementations(), results: runKats() };
    case 'info':
      return { implementations: implementations() };
    case 'serialize':
      return (input as SerializeJob[]).map((job) => {
        const custom = job.options?.customization;
        const h = lib.createHasher(job.algorithm, {
          outputLength: job.options?.outputLength,
          customization: custom === undefined ? undefined : Buffer.from(custom, 'hex'),
        });
        return h.update(Buffer.from(job.message, 'hex')).serialize().toString('hex');
      });
    case 'resume':
      return (input as ResumeJob[]).map((job) =>
        lib.Hasher.restore(Buffer.from(job.state, 'hex'))
          .update(Buffer.from(job.rest, 'hex'))
          .digest({ length: job.length })
          .toString('hex'),
      );
    default:
      throw new Error(`unknown command ${command}`);
  }
}

const chunks: Buffer[] = [];
process.stdin.on('data', (c: Buffer) => chunks.push(c));
process.stdin.on('end', () => {
  const text = Buffer.concat(chunks).toString('utf8');
  run(process.argv[2], text ? JSON.parse(text) : null).then((result) => {
    process.stdout.write(JSON.stringify(result));
  });
});
