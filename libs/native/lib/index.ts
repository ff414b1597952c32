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
export type { AlgorithmName, AlgorithmInfo, Input, HasherOptions, HashOptions } from './hasher';
export {
  ASYNC_MIN_BYTES,
  asyncThreshold,
  asyncStats,
  Hasher,
  algorithms,
  findAlgorithm,
  implementation,
  cpuFeatures,
  cpucycles,
  cpucyclesSource,
  createHasher,
  hash,
  hashAsync,
} from './hasher';
export { HashType, Hash, MutableHash, HashStream, hashTypeAlgorithm } from './compat';
