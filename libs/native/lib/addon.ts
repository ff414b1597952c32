/**
 * Loads the compiled addon (a prebuild from prebuilds/ or build/Release via
 * node-gyp-build) and describes its functions. Internal to the package.
 */
import * as path from 'node:path';

import { fromCode, HashqError } from './errors';

/** Bytes the addon reads: Buffers, any TypedArray, DataView. */
export type Bytes = ArrayBufferView;

export interface NativeAlgorithmInfo {
  name: string;
  id: number;
  digestLength: number;
  blockSize: number;
  xof: boolean;
  customizable: boolean;
  standard: string;
  implementation: string;
}

export interface NativeAddon {
  setup(errorFactory: (status: number, message: string) => Error): void;
  algorithms(): NativeAlgorithmInfo[];
  init(ctx: Uint8Array, id: number, custom: Bytes | undefined, outlen: number): void;
  update(ctx: Uint8Array, data: Bytes | string): void;
  copyUpdate(dst: Uint8Array, src: Uint8Array, data: Bytes): void;
  final(ctx: Uint8Array, out: Uint8Array, outlen: number): number;
  /** The digest into out; outlen 0 or left out: the default length. Three arguments and data a
   * TypedArray take a shorter path in the addon (see HashFast in binding/addon.cc). */
  hash(id: number, data: Bytes | string, out: Uint8Array, outlen?: number, custom?: Bytes): void;
  /** writes at out[offset…] (HQ_STATE_MAX bytes must fit), returns the length */
  serialize(ctx: Uint8Array, out: Uint8Array, offset?: number): number;
  /** the algorithm id (> 0), or a negated hq_status */
  deserialize(ctx: Uint8Array, state: Bytes, expectId: number): number;
  ctxOutlen(ctx: Uint8Array): number;
  ctxBytes(ctx: Uint8Array): number;
  /** data: one byte view, or several absorbed in order (referenced until done) */
  updateAsync(ctx: Uint8Array, data: Bytes | Bytes[], done: () => void): void;
  /** queues data after what ctx was fed before; returns the bytes fed and not absorbed yet */
  feed(ctx: Uint8Array, data: Bytes): number;
  /** done() once at most `below` fed bytes are left (0: all absorbed, the feed idle) */
  feedWait(ctx: Uint8Array, below: number, done: () => void): void;
  /** at most n updateAsync() calls of this thread run on the pool at once */
  setAsyncLimit(n: number): void;
  asyncStats(): { limit: number; inFlight: number; tasks: number; paired: number };
  setPoolIdle(): boolean;
  /** 0, or a negated errno when fd cannot be duplicated (done is then never called) */
  updateFromFile(
    ctxs: Uint8Array[],
    fd: number,
    offset: number,
    length: number,
    bufferSize: number,
    done: (errno: number, bytes: number) => void,
  ): number;
  /** 0, or a negated errno when dirFd cannot be duplicated (done is then never called) */
  hashFiles(
    dirFd: number,
    names: Bytes,
    count: number,
    start: number,
    end: number,
    templates: Uint8Array[],
    outlens: Uint32Array,
    flags: number,
    digests: Uint8Array,
    info: BigInt64Array,
    status: Int32Array,
    bufferSize: number,
    done: () => void,
  ): number;
  /** Queues one pool task; fd -1 unless status is OK and keepOpen; numbers as fstat's bigint form */
  openBeneath(
    root: string,
    relative: string,
    keepOpen: boolean,
    done: (
      status: number,
      errno: number,
      fd: number,
      path: string,
      size: bigint,
      mtimeNs: bigint,
      dev: bigint,
      ino: bigint,
      mode: bigint,
    ) => void,
  ): void;
  /** enum hq_file_status of src/hashq.h by name without the HQ_FILE_ prefix */
  fileStatus: Record<
    | 'OK'
    | 'NOT_FOUND'
    | 'FORBIDDEN'
    | 'OUTSIDE'
    | 'NOT_REGULAR'
    | 'CHANGED'
    | 'UNSUPPORTED'
    | 'READ_FAILED',
    number
  >;
  /** 0, or a negated errno (SO_RCVLOWAT of a connected socket) */
  setRecvLowWater(fd: number, bytes: number): number;
  /** true once glibc's malloc keeps freed memory (M_TRIM_THRESHOLD, M_TOP_PAD); false elsewhere */
  retainFreedHeap(bytes: number): boolean;
  /** 0, or a negated errno (sched_setscheduler with SCHED_FIFO, or SCHED_OTHER for 0) */
  setThreadFifo(tid: number, priority: number): number;
  cpucycles(): bigint;
  cpucyclesSource(): string;
  forcedPortable: boolean;
  cpuFeatures: string[];
  cpuDetected: string[];
  /** HASHQ_VERSION_STRING of src/hashq.h */
  version: string;
  /** the size limits of src/hashq.h (HQ_CTX_SIZE, HQ_STATE_MAX, HQ_OUTLEN_MAX, …) */
  limits: NativeLimits;
  /** enum hq_status of src/hashq.h, by name without the HQ_ prefix (the error code) */
  status: Record<string, number>;
}

export interface NativeLimits {
  /** bytes of a context */
  ctxSize: number;
  /** largest serialized state, bytes */
  stateMax: number;
  /** largest output of one digest call, bytes */
  outputMax: number;
  /** largest default output length of a hasher (and of a state), bytes */
  defaultOutputMax: number;
  /** longest customization string, bytes */
  customMax: number;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const load = require('node-gyp-build') as (dir: string) => unknown;

/** The package root: lib/ (ts-jest) and dist/ (compiled) both sit below it. */
export const packageRoot = path.join(__dirname, '..');

export const native = load(packageRoot) as NativeAddon;

/** hq_status number → its name, the code of its error. */
const statusCodes: string[] = [];
for (const [code, status] of Object.entries(native.status)) statusCodes[status] = code;

/** The code of a (positive) hq_status, e.g. 'ERR_STATE_INVALID'. */
export function statusCode(status: number): string {
  return statusCodes[status] ?? `status ${status}`;
}

/** The HashqError for a (positive) hq_status the addon reported. */
export function fromStatus(status: number, message: string): HashqError {
  return fromCode(statusCode(status), message);
}

native.setup(fromStatus);
