/**
 * When updateAsync()/hashAsync() go to libuv's thread pool: the per-algorithm
 * byte limit below which they hash at once, the slice size of large inputs,
 * and how many updates of one thread run on the pool at once.
 */
import * as os from 'node:os';

import { native } from './addon';
import { AlgorithmInfo, AlgorithmName, lookup } from './algorithms';
import { BadArgumentError } from './errors';

/**
 * updateAsync()/hashAsync() hash small inputs at once on the main thread,
 * because a round trip through libuv's thread pool costs tens of µs: an
 * input goes to the pool when hashing it would take longer than
 * SYNC_BUDGET_NS (about one round trip). The byte limit is measured per
 * algorithm on first use, never above ASYNC_MIN_BYTES: inputs of that size
 * or more always go to the pool.
 */
export const ASYNC_MIN_BYTES = 64 * 1024;
const SYNC_BUDGET_NS = 30_000;
/**
 * updateAsync() hands inputs larger than this to the thread pool in slices
 * of this size, one after another: a few ms of hashing each, so a pool
 * thread is handed back often while the round trip stays about 1 % of a
 * slice of SHA-256.
 */
export const ASYNC_SLICE_BYTES = 4 * 1024 * 1024;
/**
 * At most this many updateAsync() calls of one thread run on libuv's pool
 * at once: HASHQ_ASYNC_THREADS if set (1–1024), else the pool size
 * (UV_THREADPOOL_SIZE, default 4) capped at the CPUs this process may use.
 * More would only time-share the cores and keep the pool from other work
 * (fs); calls beyond the limit wait in a queue, where SHA-1/SHA-256
 * updates of different hashers pair up and run interleaved on one pool
 * thread (src/core.c hq_update2).
 */
export function configuredAsyncLimit(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.HASHQ_ASYNC_THREADS;
  if (raw !== undefined && raw !== '') {
    const n = /^[0-9]{1,4}$/.test(raw) ? Number(raw) : NaN;
    if (!(n >= 1 && n <= 1024)) {
      throw new BadArgumentError(
        `HASHQ_ASYNC_THREADS must be an integer from 1 to 1024, got "${raw}"`,
      );
    }
    return n;
  }
  const pool = Number.parseInt(env.UV_THREADPOOL_SIZE ?? '', 10);
  const poolSize = pool >= 1 ? Math.min(pool, 1024) : 4;
  return Math.max(1, Math.min(poolSize, os.availableParallelism()));
}
native.setAsyncLimit(configuredAsyncLimit());

/** The async queue of this thread: its limit, workers on the pool now,
 * updates queued since load, and how many of them ran paired. */
export function asyncStats(): { limit: number; inFlight: number; tasks: number; paired: number } {
  return native.asyncStats();
}

/**
 * From now on, libuv pool threads that hash (updateAsync, hashAsync,
 * updateFromFile, hashFiles) run at Linux's SCHED_IDLE: they take a core only
 * when no other thread of the machine wants it, and any thread that wakes
 * (a socket reader, a server on the same host, the event loop) takes it from
 * them at once. For a process whose hashing is background work. One-way: an
 * unprivileged thread cannot leave SCHED_IDLE. Returns false, and changes
 * nothing, where the platform has no SCHED_IDLE.
 */
export function setPoolIdle(): boolean {
  return native.setPoolIdle();
}

const PROBE_BYTES = 1024;
/** Indexed by algorithm id (an array: no Map lookup on every async call). */
const syncLimits: (number | undefined)[] = [];

/** @internal the byte limit below which updateAsync() hashes at once. */
export function syncLimit(info: AlgorithmInfo): number {
  let limit = syncLimits[info.id];
  if (limit === undefined) {
    const probe = new Uint8Array(PROBE_BYTES);
    const out = Buffer.allocUnsafe(info.digestLength);
    let best = Infinity;
    for (let i = 0; i < 3; i++) {
      const t0 = process.hrtime.bigint();
      native.hash(info.id, probe, out);
      best = Math.min(best, Number(process.hrtime.bigint() - t0));
    }
    const bytes = Math.floor((PROBE_BYTES * SYNC_BUDGET_NS) / Math.max(best, 1) / 1024) * 1024;
    limit = Math.min(ASYNC_MIN_BYTES, Math.max(PROBE_BYTES, bytes));
    syncLimits[info.id] = limit;
  }
  return limit;
}

/** Inputs of at least this many bytes are hashed on the thread pool by
 * updateAsync()/hashAsync() for `name` (smaller ones at once). */
export function asyncThreshold(name: AlgorithmName | string): number {
  return syncLimit(lookup(name));
}
