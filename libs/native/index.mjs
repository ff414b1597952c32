// ESM entry: re-exports the CommonJS build (one module instance for both).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const native = require('./dist/index.js');

export const {
  HashqError,
  UnknownAlgorithmError,
  InvalidStateError,
  StateAlgorithmMismatchError,
  UnsupportedStateVersionError,
  BusyError,
  BadArgumentError,
  ASYNC_MIN_BYTES,
  asyncThreshold,
  asyncStats,
  setPoolIdle,
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
  HashType,
  Hash,
  MutableHash,
  HashStream,
  hashTypeAlgorithm,
  updateFromFile,
  hashFiles,
  HashFilesResult,
  openBeneath,
  FileReadError,
  FILE_BUFFER_BYTES,
  FILES_BUFFER_BYTES,
  setRecvLowWater,
  retainFreedHeap,
  setThreadFifo,
} = native;
export default native;
