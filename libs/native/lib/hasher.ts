/**
 * The mutable Hasher and the one-shot hashes.
 *
 * A context is HQ_CTX_SIZE bytes of plain data in a JavaScript-owned
 * Uint8Array, so copying a hasher is a byte copy and no native object has
 * to be tracked or finalised.
 */
import { Bytes, fromStatus, native, statusCode } from './addon';
import { AlgorithmInfo, AlgorithmName, byId, byName, lookup } from './algorithms';
import { ASYNC_SLICE_BYTES, syncLimit } from './async';
import { BadArgumentError, BusyError, stateErrorMessage } from './errors';
import {
  customization,
  HasherOptions,
  HashOptions,
  Input,
  MAX_DEFAULT_OUTPUT,
  outputLength,
  toBytes,
} from './input';

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
 * half the cost of the view.
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
/** Module-private: marks a hasher busy (true: refused when already busy) or idle again. */
export let setHasherBusy: (h: Hasher, busy: boolean) => boolean;

/**
 * A mutable, resumable hash computation. Create one with createHasher() or
 * Hasher.restore(); `serialize()` writes the portable state (STATE_FORMAT.md).
 */
export class Hasher {
  #ctx: Uint8Array;
  #info: AlgorithmInfo;
  #outLen: number;
  #busy = false;
  /** feed() was called and flushFed() has not settled since. */
  #feeding = false;

  static {
    hasherContext = (h) => h.#ctx;
    wrapContext = (ctx, info, outLen) => new Hasher(CONSTRUCT, ctx, info, outLen);
    setHasherBusy = (h, busy) => {
      if (busy && h.#busy) return false;
      h.#busy = busy;
      return true;
    };
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
    if (!ArrayBuffer.isView(state))
      throw new BadArgumentError('state must be a Buffer or Uint8Array');
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

  /** True while an updateAsync() runs on the thread pool, or from feed() until flushFed() settles. */
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

  /**
   * updateAsync() of several pieces, in order, without copying them into one buffer: pieces a
   * caller gathered (the reads of a socket, say) go to the thread pool in one round trip per
   * ASYNC_SLICE_BYTES or so (whole pieces; smaller in total than the sync limit: at once). Do not
   * modify the pieces before the promise settles.
   */
  updateChunksAsync(chunks: readonly (Buffer | ArrayBufferView)[]): Promise<void> {
    if (this.#busy) return Promise.reject(new BusyError());
    const groups: Bytes[][] = [];
    let total = 0;
    try {
      let group: Bytes[] = [];
      let groupBytes = 0;
      for (const chunk of chunks) {
        const bytes = toBytes(chunk, 'chunks[i]');
        if (group.length > 0 && groupBytes + bytes.byteLength > ASYNC_SLICE_BYTES) {
          groups.push(group);
          group = [];
          groupBytes = 0;
        }
        group.push(bytes);
        groupBytes += bytes.byteLength;
        total += bytes.byteLength;
      }
      if (group.length > 0) groups.push(group);
      if (total < syncLimit(this.#info)) {
        for (const bytes of groups.flat()) native.update(this.#ctx, bytes);
        return RESOLVED;
      }
    } catch (err) {
      return Promise.reject(err);
    }
    const ctx = this.#ctx;
    return new Promise<void>((resolve) => {
      let next = 0;
      const step = (): void => {
        if (next === groups.length) {
          this.#busy = false;
          resolve();
          return;
        }
        native.updateAsync(ctx, groups[next++], step);
      };
      this.#busy = true;
      step();
    });
  }

  /**
   * Queues `chunk` to be absorbed on libuv's thread pool after everything fed before, without
   * copying it. One pool task hashes the queue in order for as long as it holds chunks, so a body
   * that arrives in many reads is hashed as it arrives, with no round trip through this thread
   * between them. Returns the backlog: bytes fed and not absorbed yet. From the first feed() until
   * flushFed() settles, the hasher refuses other calls (BusyError). Do not modify a chunk meanwhile.
   */
  feed(chunk: Buffer | ArrayBufferView): number {
    if (this.#busy && !this.#feeding) throw new BusyError();
    const backlog = native.feed(this.#ctx, chunk);
    this.#busy = this.#feeding = true;
    return backlog;
  }

  /** Resolves once at most `bytes` (> 0) fed bytes are left to absorb; at once if so already. */
  fedBelow(bytes: number): Promise<void> {
    if (!this.#feeding) return RESOLVED;
    return new Promise<void>((resolve) => native.feedWait(this.#ctx, bytes, resolve));
  }

  /** Resolves once everything fed has been absorbed; the hasher takes other calls again. */
  flushFed(): Promise<void> {
    if (!this.#feeding) return RESOLVED;
    return new Promise<void>((resolve) =>
      native.feedWait(this.#ctx, 0, () => {
        this.#busy = this.#feeding = false;
        resolve();
      }),
    );
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
    // it, every call level costs more than the native work.
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
  // the exact name first, without a call (a short one-shot costs little more)
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
