/**
 * The algorithm table: the metadata of every algorithm linked into the
 * addon, by name and by id.
 */
import { native } from './addon';
import { UnknownAlgorithmError } from './errors';

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

const infos: readonly AlgorithmInfo[] = Object.freeze(
  native.algorithms().map((a) => Object.freeze(a as AlgorithmInfo)),
);
export const byName = new Map<string, AlgorithmInfo>(infos.map((a) => [a.name, a]));
/** Indexed by id (ids are small integers): cheaper than a Map lookup on
 * every Hasher.restore(). */
export const byId: (AlgorithmInfo | undefined)[] = [];
for (const a of infos) byId[a.id] = a;

/** Metadata of every algorithm linked into the addon, in id order. */
export function algorithms(): AlgorithmInfo[] {
  return infos.slice();
}

/** The info of `name`, or undefined when the addon does not have it. */
export function findAlgorithm(name: string): AlgorithmInfo | undefined {
  return typeof name === 'string'
    ? (byName.get(name) ?? byName.get(name.toLowerCase()))
    : undefined;
}

/** The info of `name`; UnknownAlgorithmError when the addon does not have it. */
export function lookup(name: string): AlgorithmInfo {
  const info = findAlgorithm(name);
  if (!info) throw new UnknownAlgorithmError(`unknown algorithm: ${String(name)}`);
  return info;
}

/** The code path dispatched for `name` (e.g. "sha-ni", "portable"). */
export function implementation(name: string): string {
  return lookup(name).implementation;
}
