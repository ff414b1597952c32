/**
 * @hashq/native: resumable hash functions with a portable serialized state.
 */
export {
  HashqError,
  UnknownAlgorithmError,
  InvalidStateError,
  StateAlgorithmMismatchError,
  UnsupportedStateVersionError,
  BusyError,
  BadArgumentError,
} from './errors';
export type { AlgorithmName, AlgorithmInfo } from './algorithms';
export type { Input, HasherOptions, HashOptions } from './input';
export { algorithms, findAlgorithm, implementation } from './algorithms';
export { ASYNC_MIN_BYTES, asyncThreshold, asyncStats } from './async';
export { cpuFeatures, cpucycles, cpucyclesSource } from './cpu';
export { Hasher, createHasher, hash, hashAsync } from './hasher';
export { HashType, Hash, MutableHash, HashStream, hashTypeAlgorithm } from './compat';
