/**
 * A drop-in for the `resumable-hash` package: HashType, Hash (immutable),
 * MutableHash and HashStream, with its argument rules (Buffers only) and
 * error messages, on top of Hasher. Loads resumable-hash 0.2.5 states;
 * serialize() writes the portable hashq format.
 */
import { Transform, TransformCallback } from 'node:stream';

import { fromStatus, native, statusCode } from './addon';
import { AlgorithmInfo, AlgorithmName, findAlgorithm } from './algorithms';
import { syncLimit } from './async';
import { BadArgumentError, stateErrorMessage, UnknownAlgorithmError } from './errors';
import { Hasher, hasherContext, newContext, wrapContext, wrapLoaded } from './hasher';

/** Sha1 and Sha256 keep resumable-hash's values; the rest are appended. */
export enum HashType {
  Sha1 = 0,
  Sha256 = 1,
  Sha224 = 2,
  Sha384 = 3,
  Sha512 = 4,
  Sha3_256 = 5,
  Sha3_512 = 6,
  Shake128 = 7,
  Shake256 = 8,
  AsconHash256 = 9,
  AsconXof128 = 10,
  AsconCxof128 = 11,
  AsconHashV12 = 12,
  AsconHashaV12 = 13,
  AsconXofV12 = 14,
  AsconXofaV12 = 15,
  Md5 = 16,
  Crc32 = 17,
  Crc32c = 18,
  Crc64Nvme = 19,
  Xoodyak = 20,
  Esch256 = 21,
  Esch384 = 22,
  RomulusH = 23,
  PhotonBeetleHash256 = 24,
}

/** The algorithm of each HashType, indexed by its value. */
const TYPE_ALGORITHMS: readonly AlgorithmName[] = [
  'sha1',
  'sha256',
  'sha224',
  'sha384',
  'sha512',
  'sha3-256',
  'sha3-512',
  'shake128',
  'shake256',
  'ascon-hash256',
  'ascon-xof128',
  'ascon-cxof128',
  'asconhashv12',
  'asconhashav12',
  'asconxofv12',
  'asconxofav12',
  'md5',
  'crc32',
  'crc32c',
  'crc64nvme',
  'xoodyak',
  'esch256',
  'esch384',
  'romulush',
  'photonbeetlehash256',
];

/** The algorithm name behind a HashType value. */
export function hashTypeAlgorithm(type: HashType): AlgorithmName {
  return TYPE_ALGORITHMS[type];
}

function requireBuffer(data: unknown): asserts data is Buffer {
  if (!Buffer.isBuffer(data)) throw new BadArgumentError('Argument should be a buffer object');
}

/** A Hasher for (type, init), with resumable-hash's errors. */
function openHasher(type: unknown, init: unknown): Hasher {
  const name = typeof type === 'number' ? TYPE_ALGORITHMS[type] : undefined;
  const info: AlgorithmInfo | undefined = name === undefined ? undefined : findAlgorithm(name);
  if (!info) throw new UnknownAlgorithmError(`Unknown hash type: ${String(type)}`);
  const ctx = newContext();
  if (init === undefined || init === null) {
    native.init(ctx, info.id, undefined, 0);
    return wrapContext(ctx, info, info.digestLength);
  }
  requireBuffer(init);
  const rc = native.deserialize(ctx, init, info.id);
  if (rc < 0) throw fromStatus(-rc, `Invalid init payload: ${stateErrorMessage(statusCode(-rc))}`);
  return wrapLoaded(ctx, rc);
}

let adopted: Hasher | undefined;

/** A Hash around an existing Hasher (which it then owns). */
function adopt(type: HashType, hasher: Hasher): Hash {
  adopted = hasher;
  try {
    return new Hash(type);
  } finally {
    adopted = undefined;
  }
}

/** A synchronous result as a promise: errors become rejections, as in
 * resumable-hash, never synchronous throws. */
function settled<T>(fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (err) {
    return Promise.reject(err);
  }
}

/** Immutable: update() returns a new Hash and leaves this one unchanged. */
export class Hash {
  readonly type: HashType;
  #hasher: Hasher;

  constructor(type: HashType, init?: Buffer) {
    if (adopted !== undefined) {
      this.#hasher = adopted;
      adopted = undefined;
    } else {
      this.#hasher = openHasher(type, init);
    }
    this.type = type;
  }

  update(data: Buffer): Promise<Hash> {
    if (!Buffer.isBuffer(data) || data.length < syncLimit(this.#hasher.info)) {
      try {
        return Promise.resolve(this.updateSync(data));
      } catch (err) {
        return Promise.reject(err);
      }
    }
    const next = this.#hasher.copy();
    return next.updateAsync(data).then(() => adopt(this.type, next));
  }

  updateSync(data: Buffer): Hash {
    requireBuffer(data);
    const ctx = newContext();
    native.copyUpdate(ctx, hasherContext(this.#hasher), data);
    return adopt(this.type, wrapContext(ctx, this.#hasher.info, this.#hasher.outputLength));
  }

  digest(): Promise<Buffer> {
    return settled(() => this.#hasher.digest());
  }

  digestSync(): Buffer {
    return this.#hasher.digest();
  }

  serialize(): Buffer {
    return this.#hasher.serialize();
  }
}

/** The same methods as Hash, updating in place. */
export class MutableHash {
  readonly type: HashType;
  #hasher: Hasher;

  constructor(type: HashType, init?: Buffer) {
    this.#hasher = openHasher(type, init);
    this.type = type;
  }

  update(data: Buffer): Promise<void> {
    if (!Buffer.isBuffer(data))
      return Promise.reject(new BadArgumentError('Argument should be a buffer object'));
    return this.#hasher.updateAsync(data);
  }

  updateSync(data: Buffer): void {
    requireBuffer(data);
    this.#hasher.update(data);
  }

  digest(): Promise<Buffer> {
    return settled(() => this.#hasher.digest());
  }

  digestSync(): Buffer {
    return this.#hasher.digest();
  }

  serialize(): Buffer {
    return this.#hasher.serialize();
  }
}

/** A Transform: the data written in is hashed (large chunks on the thread
 * pool); the digest is pushed when the input ends. */
export class HashStream extends Transform {
  readonly type: HashType;
  #hasher: Hasher;

  constructor(type: HashType, init?: Buffer) {
    super();
    this.#hasher = openHasher(type, init);
    this.type = type;
  }

  override _transform(
    chunk: unknown,
    _encoding: BufferEncoding,
    callback: TransformCallback,
  ): void {
    if (!Buffer.isBuffer(chunk)) {
      callback(new BadArgumentError('Argument should be a buffer object'));
      return;
    }
    this.#hasher.updateAsync(chunk).then(() => callback(), callback);
  }

  override _flush(callback: TransformCallback): void {
    try {
      callback(null, this.#hasher.digest());
    } catch (err) {
      callback(err as Error);
    }
  }

  /** The state after the data consumed so far (call between writes). */
  serialize(): Buffer {
    return this.#hasher.serialize();
  }
}
