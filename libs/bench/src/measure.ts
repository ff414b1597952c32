/**
 * The eBASH-style measurement: for each algorithm and each way to hash it,
 * many single-message timings with the CPU's counter at every length of the
 * grid, the counter's own overhead subtracted, summarised as quartiles.
 */
import * as crypto from 'node:crypto';

import * as native from '@hashq/native';

import { type Contender, contendersFor } from './contenders';
import { machineRecord } from './machine';
import { isSpread, longSlope, median, type Quartiles, quartiles, scaleQuartiles } from './stats';
import {
  type BenchmarkRun,
  type BenchmarkSettings,
  type LengthResult,
  type Provider,
  PROVIDERS,
  type SeriesResult,
} from './types';

/** The default grid: 0..4096 bytes with eBASH's 8, 64, 576, 1536, 4096. */
export const DEFAULT_LENGTHS = [
  0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 576, 1024, 1536, 2048, 4096,
];
export const QUICK_LENGTHS = [0, 8, 64, 576, 1536, 4096];
/** "Long messages": the per-byte slope between these two lengths. */
export const LONG_FROM = 16384;
export const LONG_TO = 65536;

export interface BenchmarkOptions {
  quick?: boolean;
  algorithms?: string[];
  providers?: Provider[];
  lengths?: number[];
  measurements?: number;
  label?: string;
}

export interface Progress {
  done: number;
  total: number;
  algorithm: string;
  provider: Provider;
}

const SAMPLE_POOL = 1 << 17;

/** Median ticks of an empty measurement: two back-to-back counter reads. */
export function counterOverhead(samples = 1001): number {
  const ticks: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t0 = native.cpucycles();
    const t1 = native.cpucycles();
    ticks.push(Number(t1 - t0));
  }
  return median(ticks);
}

/** Ticks of `count` single calls on random messages of `length` bytes. */
function timeCalls(
  fn: (m: Uint8Array) => unknown,
  pool: Buffer,
  length: number,
  count: number,
  overhead: number,
): number[] {
  const ticks: number[] = [];
  for (let i = 0; i < 3; i++) fn(pool.subarray(0, length)); // warm up
  for (let i = 0; i < count; i++) {
    const at = Math.floor(Math.random() * (pool.length - length + 1));
    const message = pool.subarray(at, at + length);
    const t0 = native.cpucycles();
    fn(message);
    const t1 = native.cpucycles();
    ticks.push(Math.max(0, Number(t1 - t0) - overhead));
  }
  return ticks;
}

function lengthResult(length: number, ticks: number[]): LengthResult {
  const cycles = quartiles(ticks);
  return {
    length,
    cycles,
    cyclesPerByte: scaleQuartiles(cycles, 1 / Math.max(1, length)),
    spread: isSpread(cycles),
  };
}

function measureSeries(
  algorithm: string,
  c: Contender,
  s: BenchmarkSettings,
  pool: Buffer,
): SeriesResult {
  const lengths = s.lengths.map((len) =>
    lengthResult(len, timeCalls(c.hash, pool, len, s.measurements, s.counterOverhead)),
  );
  const from = lengthResult(
    s.longFrom,
    timeCalls(c.hash, pool, s.longFrom, s.longMeasurements, s.counterOverhead),
  );
  const to = lengthResult(
    s.longTo,
    timeCalls(c.hash, pool, s.longTo, s.longMeasurements, s.counterOverhead),
  );
  const slope = longSlope(from, to);
  const series: SeriesResult = {
    algorithm,
    provider: c.provider,
    implementation: c.implementation,
    lengths,
    long: {
      from: s.longFrom,
      to: s.longTo,
      cyclesPerByte: slope,
      spread: from.spread || to.spread || isSpread(slope),
    },
  };
  if (c.provider === 'hashq') series.serializeRestore = serializeRestoreCost(algorithm, s, pool);
  return series;
}

/** Ticks of serialize() + Hasher.restore() of a state with a partial block. */
function serializeRestoreCost(algorithm: string, s: BenchmarkSettings, pool: Buffer): Quartiles {
  const h = native.createHasher(algorithm);
  h.update(pool.subarray(0, 100));
  const ticks = timeCalls(
    () => native.Hasher.restore(h.serialize()),
    pool,
    0,
    s.measurements,
    s.counterOverhead,
  );
  return quartiles(ticks);
}

export function settingsFor(options: BenchmarkOptions): BenchmarkSettings {
  const quick = options.quick ?? false;
  const known = native.algorithms().map((a) => a.name as string);
  const algorithms = options.algorithms?.length ? options.algorithms : known;
  const unknown = algorithms.filter((a) => !known.includes(a));
  if (unknown.length) throw new Error(`unknown algorithm(s): ${unknown.join(', ')}`);
  const providers = options.providers?.length ? options.providers : [...PROVIDERS];
  const badProvider = providers.filter((p) => !PROVIDERS.includes(p));
  if (badProvider.length) throw new Error(`unknown implementation(s): ${badProvider.join(', ')}`);
  const lengths = [
    ...new Set(options.lengths?.length ? options.lengths : quick ? QUICK_LENGTHS : DEFAULT_LENGTHS),
  ].sort((a, b) => a - b);
  if (lengths.some((l) => !Number.isInteger(l) || l < 0 || l > SAMPLE_POOL / 2)) {
    throw new Error(`lengths must be integers in 0..${SAMPLE_POOL / 2}`);
  }
  return {
    quick,
    algorithms,
    providers,
    lengths,
    measurements: options.measurements ?? (quick ? 15 : 63),
    longFrom: LONG_FROM,
    longTo: LONG_TO,
    longMeasurements: quick ? 9 : 31,
    counterOverhead: counterOverhead(),
  };
}

/** A full run: machine record, then every algorithm × contender. */
export async function runBenchmark(
  options: BenchmarkOptions = {},
  onProgress?: (p: Progress) => void,
): Promise<BenchmarkRun> {
  const started = Date.now();
  const settings = settingsFor(options);
  const machine = machineRecord(settings.quick);
  const pool = crypto.randomBytes(SAMPLE_POOL);
  const plan: { algorithm: string; contender: Contender }[] = [];
  for (const algorithm of settings.algorithms) {
    for (const contender of await contendersFor(algorithm, settings.providers))
      plan.push({ algorithm, contender });
  }
  const series: SeriesResult[] = [];
  for (const [i, { algorithm, contender }] of plan.entries()) {
    onProgress?.({ done: i, total: plan.length, algorithm, provider: contender.provider });
    series.push(measureSeries(algorithm, contender, settings, pool));
    // let timers and I/O run between series (the worker renews its lock)
    await new Promise((resolve) => setImmediate(resolve));
  }
  onProgress?.({ done: plan.length, total: plan.length, algorithm: '', provider: 'hashq' });
  const finished = Date.now();
  return {
    format: 'hashq-bench/1',
    label: options.label,
    startedAt: new Date(started).toISOString(),
    finishedAt: new Date(finished).toISOString(),
    durationMs: finished - started,
    machine,
    settings,
    series,
  };
}
