import type { Quartiles } from './stats';

/** Who implements a series: our addon, or what a user would pick instead. */
export type Provider = 'hashq' | 'node-createHash' | 'node-hash' | 'hash-wasm';
export const PROVIDERS: readonly Provider[] = [
  'hashq',
  'node-createHash',
  'node-hash',
  'hash-wasm',
];

export interface LengthResult {
  /** message length, bytes */
  length: number;
  /** counter ticks per message, counter overhead subtracted */
  cycles: Quartiles;
  /** ticks per byte (for length 0: per message) */
  cyclesPerByte: Quartiles;
  /** eBASH's "?": the quartiles are far apart */
  spread: boolean;
}

export interface SeriesResult {
  algorithm: string;
  provider: Provider;
  /** the code path: e.g. "sha-ni", "portable"; "openssl" for Node, "wasm" for hash-wasm */
  implementation: string;
  lengths: LengthResult[];
  /** "long messages": the per-byte slope between two large lengths */
  long: { from: number; to: number; cyclesPerByte: Quartiles; spread: boolean };
  /** serialize() + Hasher.restore() of a state holding a partial block, ticks (hashq only) */
  serializeRestore?: Quartiles;
}

export interface MachineRecord {
  arch: string;
  platform: string;
  os: string;
  cpuModel: string;
  cores: number;
  counter: string;
  /** counter ticks per second, measured against the monotonic clock */
  counterHz: number;
  /** ESTIMATE of the core clock from a chain of dependent adds (one per cycle) */
  coreHzEstimate: number;
  node: string;
  libraryVersion: string;
  /** the code path dispatched for each algorithm of the addon */
  implementations: Record<string, string>;
  hostname: string;
}

export interface BenchmarkSettings {
  quick: boolean;
  algorithms: string[];
  providers: Provider[];
  lengths: number[];
  measurements: number;
  longFrom: number;
  longTo: number;
  longMeasurements: number;
  /** median counter overhead subtracted from every measurement, ticks */
  counterOverhead: number;
}

export interface BenchmarkRun {
  format: 'hashq-bench/1';
  id?: string;
  label?: string;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  machine: MachineRecord;
  settings: BenchmarkSettings;
  series: SeriesResult[];
}
