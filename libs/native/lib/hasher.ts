/**
 * The typed API: algorithm metadata, the mutable Hasher, one-shot hashes.
 *
 * A context is HQ_CTX_SIZE bytes of plain data in a JavaScript-owned
 * Uint8Array, so copying a hasher is a byte copy and no native object has
 * to be tracked or finalised.
 */
import * as os from 'node:os';

import { Bytes, fromStatus, native, statusCode } from './addon';
import { BadArgumentError, BusyError, UnknownAlgorithmError, stateErrorMessage } from './errors';

export type AlgorithmName =
  | 'sha1'
  | 'sha224'
  | 'sha256'
  | 'sha384'
  | 'sha512'
  | 'sha3-256'
  | 'sha3-512'
  | 'shake128'
  | 'shake256'
  | 'ascon-hash256'
  | 'ascon-xof128'
  | 'ascon-cxof128'
  | 'asconhashv12'
  | 'asconhashav12'
  | 'asconxofv12'
  | 'asconxofav12'
  | 'md5'
  | 'crc32'
  | 'crc32c'
  | 'crc64nvme'
  | 'xoodyak'
  | 'esch256'
  | 'esch384'
  | 'romulush'
  | 'photonbeetlehash256';

export interface AlgorithmInfo {
  /** e.g. "sha256", "sha3-256", "ascon-cxof128" */
  readonly name: AlgorithmName;
  /** stable id, written into serialized states */
  readonly id: number;
  /** digest length in bytes (the default output length of an XOF) */
  readonly digestLength: number;
  /** block size or sponge rate in bytes */
  readonly blockSize: number;
  readonly xof: boolean;
  /** accepts a customization string (CXOF) */
  readonly customizable: boolean;
  /** e.g. "FIPS 180-4" */
  readonly standard: string;
  /** the code path dispatched at load time, e.g. "sha-ni", "portable" */
  readonly implementation: string;
}

/** Bytes to hash: a Buffer, any TypedArray or DataView, or a string (UTF-8). */
export type Input = Buffer | ArrayBufferView | string;

export interface HasherOptions {
  /** customization string (ascon-cxof128), at most 256 bytes */
  customization?: Input;
  /** default output length of an XOF, in bytes */
  outputLength?: number;
}

export interface HashOptions extends HasherOptions {
  /** output length in bytes (XOFs; fixed-length algorithms accept only their own) */
  length?: number;
}

/** Largest XOF output of one digest call (HQ_OUTLEN_MAX). */
const MAX_OUTPUT = native.limits.outputMax;
/** Largest default output length a hasher (and its state) may carry (HQ_DEFAULT_OUTLEN_MAX). */
const MAX_DEFAULT_OUTPUT = native.limits.defaultOutputMax;

/**
 * updateAsync()/hashAsync() hash small inputs at once on the main thread,
 * because a round trip through libuv's thread pool costs ≈ 25–35 µs here:
 * an input goes to the pool when hashing it would take longer than
 * SYNC_BUDGET_NS. The byte limit is measured per algorithm on first use
 * (SHA-256 with SHA-NI: ≈ 40 KiB; PHOTON-Beetle: 1 KiB), never above
 * ASYNC_MIN_BYTES: inputs of that size or more always go to the pool.
 */
export const ASYNC_MIN_BYTES = 64 * 1024;
const SYNC_BUDGET_NS = 30_000;
/**
 * updateAsync() hands inputs larger than this to the thread pool in slices
 * of this size, one after another (4 MiB: ≈ 2.5 ms of SHA-256 with SHA-NI,
 * ≈ 30 ms of the slowest algorithm; a pool round trip, ≈ 30 µs, is ~1% of
 * a slice of SHA-256).
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
      throw new BadArgumentError(`HASHQ_ASYNC_THREADS must be an integer from 1 to 1024, got "${raw}"`);
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

const infos: readonly AlgorithmInfo[] = Object.freeze(
  native.algorithms().map((a) => Object.freeze(a as AlgorithmInfo)),
);
const byName = new Map<string, AlgorithmInfo>(infos.map((a) => [a.name, a]));
/** Indexed by id (ids are small integers): cheaper than a Map lookup on
 * every Hasher.restore(). */
const byId: (AlgorithmInfo | undefined)[] = [];
for (const a of infos) byId[a.id] = a;

/** Metadata of every algorithm linked into the addon, in id order. */
export function algorithms(): AlgorithmInfo[] {
  return infos.slice();
}

/** The info of `name`, or undefined when the addon does not have it. */
export function findAlgorithm(name: string): AlgorithmInfo | undefined {
  return typeof name === 'string' ? byName.get(name) ?? byName.get(name.toLowerCase()) : undefined;
}

function lookup(name: string): AlgorithmInfo {
  const info = findAlgorithm(name);
  if (!info) throw new UnknownAlgorithmError(`unknown algorithm: ${String(name)}`);
  return info;
}

/** The code path dispatched for `name` (e.g. "sha-ni", "portable"). */
export function implementation(name: string): string {
  return lookup(name).implementation;
}

/**
 * The CPU features dispatch uses (`active`) and the ones the CPU has
 * (`detected`), by name. They differ when HASHQ_NATIVE_IMPL=portable or
 * HASHQ_NATIVE_DISABLE (a comma-separated list of names) hides some.
 */
export function cpuFeatures(): { active: string[]; detected: string[] } {
  return { active: [...native.cpuFeatures], detected: [...native.cpuDetected] };
}

/** The CPU's cycle counter (rdtsc, cntvct_el0, rdtime or a monotonic clock). */
export function cpucycles(): bigint {
  return native.cpucycles();
}

/** Which counter cpucycles() reads, e.g. "rdtsc". */
export function cpucyclesSource(): string {
  return native.cpucyclesSource();
}

/**
 * Contexts are carved from shared slabs, 64 to a slab: a fresh ArrayBuffer
 * per context would cost an allocation each, and a zero-filled one the
 * zeroing too (hq_init and hq_deserialize write the context before use).
 * HQ_CTX_SIZE is a multiple of 8 and slabs are 8-aligned, so every context
 * is (the addon checks). A live hasher keeps its slab (28 KiB) alive.
 */
const SLAB_CONTEXTS = 64;
let slab = new ArrayBuffer(0);
let slabUsed = 0;

const CTX_SIZE = native.limits.ctxSize;
const STATE_MAX = native.limits.stateMax;

function newSlab(): void {
  const fresh = Buffer.allocUnsafeSlow(CTX_SIZE * SLAB_CONTEXTS);
  slab = fresh.buffer;
  slabUsed = fresh.byteOffset;
}

function newContext(): Uint8Array {
  const size = CTX_SIZE;
  if (slabUsed + size > slab.byteLength) newSlab();
  const ctx = new Uint8Array(slab, slabUsed, size);
  slabUsed += size;
  return ctx;
}

/**
 * Serialized states are written into a shared pool and handed out as
 * Buffers over it (as Buffer.allocUnsafe does): one Buffer object per
 * state, no copy.
 *
 * The views are made by PoolBuffer, a Uint8Array subclass whose prototype
 * chain runs through Buffer.prototype with `constructor` set to Buffer, as
 * Node's own internal FastBuffer is: Buffer.isBuffer(), instanceof Buffer,
 * every Buffer method and jest's type equality all see a Buffer. Calling
 * the constructor directly skips Buffer.from()'s argument dispatch, about
 * half the cost of the view (65 vs 130 ns measured here).
 */
class PoolBuffer extends Uint8Array {}
Object.setPrototypeOf(PoolBuffer.prototype, Buffer.prototype);
Object.defineProperty(PoolBuffer.prototype, 'constructor', {
  value: Buffer,
  writable: true,
  configurable: true,
  enumerable: false,
});

const STATE_POOL_BYTES = 64 * 1024;
let statePool: Uint8Array = new Uint8Array(0);
let statePoolBuffer: ArrayBuffer = statePool.buffer as ArrayBuffer;
/** Starts "full" so that the first serialize() allocates the first pool. */
let statePoolUsed = STATE_POOL_BYTES;

function toBytes(data: Input, what = 'data'): Bytes {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return data;
  throw new BadArgumentError(`${what} must be a Buffer, TypedArray, DataView or string`);
}

function outputLength(info: AlgorithmInfo, length: number | undefined, fallback: number, max = MAX_OUTPUT): number {
  if (length === undefined) return fallback;
  if (!Number.isInteger(length) || length < 1 || length > max) {
    throw new BadArgumentError(`output length must be an integer in 1..${max}`);
  }
  if (!info.xof && length !== info.digestLength) {
    throw new BadArgumentError(`${info.name} has a fixed output length of ${info.digestLength} bytes`);
  }
  return length;
}

function customization(info: AlgorithmInfo, custom: Input | undefined): Bytes | undefined {
  if (custom === undefined) return undefined;
  if (!info.customizable) throw new BadArgumentError(`${info.name} takes no customization string`);
  return toBytes(custom, 'customization');
}

/** A Hasher around a context hq_deserialize just loaded (algorithm `id`). */
export function wrapLoaded(ctx: Uint8Array, id: number): Hasher {
  const info = byId[id]!; // the core loads only algorithms it has
  return wrapContext(ctx, info, info.xof ? native.ctxOutlen(ctx) : info.digestLength);
}

const RESOLVED: Promise<void> = Promise.resolve();
const CONSTRUCT = Symbol('Hasher.construct');

/** Module-private access to a Hasher's context (for the compat layer). */
export let hasherContext: (h: Hasher) => Uint8Array;
/** Wraps a context (already initialised or loaded) in a Hasher. */
export let wrapContext: (ctx: Uint8Array, info: AlgorithmInfo, outLen: number) => Hasher;

/**
 * A mutable, resumable hash computation. Create one with createHasher() or
 * Hasher.restore(); `serialize()` writes the portable state (STATE_FORMAT.md).
 */
export class Hasher {
  #ctx: Uint8Array;
  #info: AlgorithmInfo;
  #outLen: number;
  #busy = false;

  static {
    hasherContext = (h) => h.#ctx;
    wrapContext = (ctx, info, outLen) => new Hasher(CONSTRUCT, ctx, info, outLen);
  }

  /** @internal use createHasher() or Hasher.restore() */
  constructor(token: symbol, ctx: Uint8Array, info: AlgorithmInfo, outLen: number) {
    if (token !== CONSTRUCT) {
      throw new TypeError('use createHasher() or Hasher.restore() to make a Hasher');
    }
    this.#ctx = ctx;
    this.#info = info;
    this.#outLen = outLen;
  }

  /**
   * Loads a state written by serialize() (or by resumable-hash 0.2.5).
   * With `algorithm`, a state of another algorithm is refused
   * (StateAlgorithmMismatchError).
   */
  static restore(state: Uint8Array, algorithm?: string): Hasher {
    if (!ArrayBuffer.isView(state)) throw new BadArgumentError('state must be a Buffer or Uint8Array');
    const expect = algorithm === undefined ? -1 : lookup(algorithm).id;
    // newContext() and wrapLoaded() written out, as in serialize()
    if (slabUsed + CTX_SIZE > slab.byteLength) newSlab();
    const ctx = new Uint8Array(slab, slabUsed, CTX_SIZE);
    slabUsed += CTX_SIZE;
    const rc = native.deserialize(ctx, state, expect);
    if (rc < 0) throw fromStatus(-rc, stateErrorMessage(statusCode(-rc)));
    const info = byId[rc]!; // the core loads only algorithms it has
    return new Hasher(CONSTRUCT, ctx, info, info.xof ? native.ctxOutlen(ctx) : info.digestLength);
  }

  get algorithm(): AlgorithmName {
    return this.#info.name;
  }

  /** Metadata of this hasher's algorithm. */
  get info(): AlgorithmInfo {
    return this.#info;
  }

  /** Default output length of digest(), bytes. */
  get outputLength(): number {
    return this.#outLen;
  }

  /** Message bytes absorbed so far. */
  get bytesHashed(): number {
    this.#idle();
    return native.ctxBytes(this.#ctx);
  }

  /** True while an updateAsync() is running on the thread pool. */
  get busy(): boolean {
    return this.#busy;
  }

  update(data: Input): this {
    this.#idle();
    native.update(this.#ctx, data);
    return this;
  }

  /**
   * Absorbs data on libuv's thread pool (inputs under ASYNC_MIN_BYTES at
   * once). The hasher refuses other calls (BusyError) until it settles.
   * Do not modify or transfer `data` before the promise settles.
   */
  updateAsync(data: Input): Promise<void> {
    if (this.#busy) return Promise.reject(new BusyError());
    let bytes: Bytes;
    try {
      bytes = toBytes(data);
      if (bytes.byteLength < syncLimit(this.#info)) {
        native.update(this.#ctx, bytes);
        return RESOLVED;
      }
    } catch (err) {
      return Promise.reject(err);
    }
    const ctx = this.#ctx;
    const total = bytes.byteLength;
    if (total <= ASYNC_SLICE_BYTES) {
      return new Promise<void>((resolve) => {
        native.updateAsync(ctx, bytes, () => {
          this.#busy = false;
          resolve();
        });
        this.#busy = true;
      });
    }
    // Large inputs go to the pool in slices queued one after another, so
    // one input never holds a pool thread for long (other pool work, e.g.
    // fs, gets turns) and the main thread runs between slices.
    const view = new Uint8Array(bytes.buffer, bytes.byteOffset, total);
    return new Promise<void>((resolve, reject) => {
      let at = 0;
      const next = (): void => {
        if (at >= total) {
          this.#busy = false;
          resolve();
          return;
        }
        const end = Math.min(total, at + ASYNC_SLICE_BYTES);
        const part = view.subarray(at, end);
        at = end;
        try {
          native.updateAsync(ctx, part, next);
        } catch (err) {
          this.#busy = false;
          reject(err);
        }
      };
      this.#busy = true;
      next();
    });
  }

  /** The digest (or `length` bytes of XOF output); the hasher is unchanged
   * and may be updated further. */
  digest(options?: { length?: number }): Buffer {
    this.#idle();
    const len = outputLength(this.#info, options?.length, this.#outLen);
    const out = Buffer.allocUnsafe(len);
    native.final(this.#ctx, out, len);
    return out;
  }

  /** The portable serialized state (contains a plaintext tail of the input). */
  serialize(): Buffer {
    // Written out in one function (no helper calls): until V8 has optimised
    // it, every call level costs more than the native work (~30 ns).
    if (this.#busy) throw new BusyError();
    let at = statePoolUsed;
    if (at + STATE_MAX > STATE_POOL_BYTES) {
      // a pool of its own (not Node's shared Buffer pool), 8-byte aligned
      statePoolBuffer = new ArrayBuffer(STATE_POOL_BYTES);
      statePool = new Uint8Array(statePoolBuffer);
      at = 0;
    }
    const n = native.serialize(this.#ctx, statePool, at);
    statePoolUsed = at + ((n + 7) & ~7);
    return new PoolBuffer(statePoolBuffer, at, n) as unknown as Buffer;
  }

  copy(): Hasher {
    this.#idle();
    const ctx = newContext();
    ctx.set(this.#ctx);
    return new Hasher(CONSTRUCT, ctx, this.#info, this.#outLen);
  }

  #idle(): void {
    if (this.#busy) throw new BusyError();
  }
}

/** A fresh Hasher. `options.customization` for ascon-cxof128,
 * `options.outputLength` for the default XOF output length. */
export function createHasher(name: AlgorithmName | string, options?: HasherOptions): Hasher {
  const info = lookup(name);
  const outLen = outputLength(info, options?.outputLength, info.digestLength, MAX_DEFAULT_OUTPUT);
  const custom = customization(info, options?.customization);
  const ctx = newContext();
  native.init(ctx, info.id, custom, outLen);
  return wrapContext(ctx, info, outLen);
}

/** Hashes `data` in one call. */
export function hash(name: AlgorithmName | string, data: Input, options?: HashOptions): Buffer {
  // the exact name first, without a call (a one-shot of 64 bytes is ~300 ns)
  const info = byName.get(name) ?? lookup(name);
  if (options === undefined) {
    const out = Buffer.allocUnsafe(info.digestLength);
    native.hash(info.id, data, out);
    return out;
  }
  const len = outputLength(info, options.length ?? options.outputLength, info.digestLength);
  const custom = customization(info, options.customization);
  const out = Buffer.allocUnsafe(len);
  native.hash(info.id, data, out, len, custom);
  return out;
}

/** hash() on the thread pool for large inputs (at once for small ones). */
export async function hashAsync(
  name: AlgorithmName | string,
  data: Input,
  options?: HashOptions,
): Promise<Buffer> {
  const bytes = toBytes(data);
  if (bytes.byteLength < syncLimit(lookup(name))) return hash(name, bytes, options);
  const h = createHasher(name, options);
  await h.updateAsync(bytes);
  return h.digest({ length: options?.length });
}

export { newContext };
