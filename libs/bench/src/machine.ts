/**
 * The machine record of a run, and the counter's frequency measured against
 * the monotonic clock (the counter may tick at a fixed rate unlike the core).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import * as native from '@hashq/native';

import { findUp } from './reference';
import { median } from './stats';
import type { MachineRecord } from './types';

/** @hashq/native's version: its package.json as installed. */
function nativeVersion(): string {
  const file = findUp(path.join('node_modules', '@hashq', 'native', 'package.json'));
  return file
    ? (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version
    : 'unknown';
}

/** A counter reading with the monotonic time around it; retried until the
 * two clock reads are close (no preemption in between). */
function pairedReading(): { ns: number; ticks: bigint } {
  let best = { gap: Infinity, ns: 0, ticks: 0n };
  for (let i = 0; i < 50 && best.gap > 2000; i++) {
    const a = process.hrtime.bigint();
    const ticks = native.cpucycles();
    const b = process.hrtime.bigint();
    const gap = Number(b - a);
    if (gap < best.gap) best = { gap, ns: Number(a) + gap / 2, ticks };
  }
  return best;
}

/** Counter ticks per second against process.hrtime over `ms` of spinning,
 * the median of `rounds`. Preemption in the middle does not matter (both
 * clocks run on); the ends are read in close pairs. */
export function measureCounterHz(ms = 100, rounds = 3): number {
  const rates: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const start = pairedReading();
    const end = BigInt(Math.round(start.ns + ms * 1e6));
    while (process.hrtime.bigint() < end);
    const stop = pairedReading();
    rates.push((Number(stop.ticks - start.ticks) * 1e9) / (stop.ns - start.ns));
  }
  return median(rates);
}

/** Sixteen dependent 32-bit adds per iteration: each waits for the last,
 * so an iteration takes ≈ 16 core cycles (the loop's own work overlaps). */
function addChain(iterations: number, y: number): number {
  let x = 0;
  for (let i = 0; i < iterations; i++) {
    x = (x + y) | 0;
    x = (x + y) | 0;
    x = (x + y) | 0;
    x = (x + y) | 0;
    x = (x + y) | 0;
    x = (x + y) | 0;
    x = (x + y) | 0;
    x = (x + y) | 0;
    x = (x + y) | 0;
    x = (x + y) | 0;
    x = (x + y) | 0;
    x = (x + y) | 0;
    x = (x + y) | 0;
    x = (x + y) | 0;
    x = (x + y) | 0;
    x = (x + y) | 0;
  }
  return x;
}

/**
 * An ESTIMATE of the core clock (Hz): dependent adds per second, the best
 * of many short runs (each well under a scheduler time slice, so on a busy
 * machine some run uninterrupted; interruptions only make a run slower).
 * Reported as an estimate: it trusts the JIT's code, not a calibrated counter.
 */
export function estimateCoreHz(iterations = 50_000, rounds = 41): number {
  let best = 0;
  let sink = 0;
  for (let r = 0; r < 5; r++) sink ^= addChain(iterations, r + 1); // let the JIT optimise it first
  for (let r = 0; r < rounds; r++) {
    const t0 = process.hrtime.bigint();
    sink ^= addChain(iterations, r + 1);
    const ns = Number(process.hrtime.bigint() - t0);
    best = Math.max(best, (iterations * 16 * 1e9) / ns);
  }
  if (sink === 0.5) console.log(sink); // keeps the chain's result alive
  return best;
}

export function machineRecord(quick: boolean): MachineRecord {
  const cpus = os.cpus();
  const implementations: Record<string, string> = {};
  for (const a of native.algorithms()) implementations[a.name] = a.implementation;
  return {
    arch: process.arch,
    platform: process.platform,
    os: `${os.type()} ${os.release()}`,
    cpuModel: cpus[0]?.model ?? 'unknown',
    cores: os.availableParallelism?.() ?? cpus.length,
    counter: native.cpucyclesSource(),
    counterHz: measureCounterHz(quick ? 30 : 100),
    coreHzEstimate: estimateCoreHz(50_000, quick ? 21 : 61),
    node: process.version,
    libraryVersion: nativeVersion(),
    implementations,
    hostname: os.hostname(),
  };
}
