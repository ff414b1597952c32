/**
 * @hashq/native: resumable hash functions with a portable serialized state.
 */
export type { AlgorithmInfo, AlgorithmName } from './algorithms';
export { algorithms, findAlgorithm, implementation } from './algorithms';
export { ASYNC_MIN_BYTES, asyncStats, asyncThreshold, setPoolIdle } from './async';
export { Hash, HashStream, HashType, hashTypeAlgorithm, MutableHash } from './compat';
export { cpucycles, cpucyclesSource, cpuFeatures } from './cpu';
export {
  BadArgumentError,
  BusyError,
  HashqError,
  InvalidStateError,
  StateAlgorithmMismatchError,
  UnknownAlgorithmError,
  UnsupportedStateVersionError,
} from './errors';
export type {
  FileError,
  FileErrorCode,
  HashedFile,
  HashFilesOptions,
  OpenBeneathOptions,
  OpenBeneathResult,
  OpenBeneathStatus,
  UpdateFromFileOptions,
} from './files';
export {
  FILE_BUFFER_BYTES,
  FileReadError,
  FILES_BUFFER_BYTES,
  hashFiles,
  HashFilesResult,
  openBeneath,
  updateFromFile,
} from './files';
export { createHasher, hash, hashAsync, Hasher } from './hasher';
export { retainFreedHeap } from './heap';
export type { HasherOptions, HashOptions, Input } from './input';
export { setThreadFifo } from './scheduling';
export { setRecvLowWater } from './sockets';
