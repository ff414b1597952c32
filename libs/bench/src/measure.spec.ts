/**
 * A quick run of the real measurement. Sanity, not timing: no assertion on
 * how fast anything is, only that the units agree with each other.
 */
import * as native from '@hashq/native';

import { renderComparison, renderReport } from './html';
import { runBenchmark } from './measure';
import { median } from './stats';
import { textTables } from './tables';
import type { BenchmarkRun } from './types';

const LEN = 4096;

/** ticks/byte of sha256 on LEN-byte messages from wall-clock time and the
 * measured counter frequency: the median of many short batches (a batch a
 * busy machine interrupted does not move the median). */
function wallClockTicksPerByte(counterHz: number): number {
  const message = Buffer.alloc(LEN, 7);
  const calls = 10;
  const perCall: number[] = [];
  for (let r = 0; r < 201; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) native.hash('sha256', message);
    perCall.push(Number(process.hrtime.bigint() - t0) / calls);
  }
  return (median(perCall) * counterHz) / 1e9 / LEN;
}

describe('a quick benchmark run', () => {
  let a: BenchmarkRun;
  let b: BenchmarkRun;

  beforeAll(async () => {
    const options = {
      quick: true,
      algorithms: ['sha256', 'sha3-256', 'ascon-hash256'],
      label: 'A',
    };
    a = await runBenchmark(options);
    b = await runBenchmark({ ...options, label: 'B' });
  });

  it('records the machine and the dispatched implementation of each algorithm', () => {
    expect(a.machine.arch).toBe(process.arch);
    expect(a.machine.counter).toBe(native.cpucyclesSource());
    expect(a.machine.counterHz).toBeGreaterThan(0);
    expect(a.machine.coreHzEstimate).toBeGreaterThan(0);
    expect(a.machine.implementations.sha256).toBe(native.implementation('sha256'));
    expect(a.settings.lengths).toEqual(expect.arrayContaining([8, 64, 576, 1536, 4096]));
  });

  it('has a series per algorithm and contender, with ordered quartiles at every length', () => {
    const ours = a.series.filter((s) => s.provider === 'hashq').map((s) => s.algorithm);
    expect(ours.sort()).toEqual(['ascon-hash256', 'sha256', 'sha3-256']);
    // Node's crypto and hash-wasm have sha256; nobody else has Ascon
    expect(
      a.series
        .filter((s) => s.algorithm === 'sha256')
        .map((s) => s.provider)
        .sort(),
    ).toEqual(['hash-wasm', 'hashq', 'node-createHash', 'node-hash']);
    expect(a.series.filter((s) => s.algorithm === 'ascon-hash256')).toHaveLength(1);
    for (const s of a.series) {
      expect(s.lengths.map((l) => l.length)).toEqual(a.settings.lengths);
      for (const l of s.lengths) {
        expect(l.cycles.q1).toBeLessThanOrEqual(l.cycles.median);
        expect(l.cycles.median).toBeLessThanOrEqual(l.cycles.q3);
      }
      expect(s.long.from).toBeLessThan(s.long.to);
      expect(s.serializeRestore !== undefined).toBe(s.provider === 'hashq');
    }
  });

  it('sha256 ticks/byte at 4096 bytes is within 3x of the wall-clock-derived value', () => {
    const series = a.series.find((s) => s.algorithm === 'sha256' && s.provider === 'hashq')!;
    const measured = series.lengths.find((l) => l.length === LEN)!.cyclesPerByte.median;
    const derived = wallClockTicksPerByte(a.machine.counterHz);
    expect(measured / derived).toBeGreaterThan(1 / 3);
    expect(measured / derived).toBeLessThan(3);
  });

  it('prints eBASH-style tables and an HTML report with one plot series per algorithm', () => {
    const text = textTables(a);
    expect(text).toContain('Cycles/byte for 64 bytes');
    expect(text).toContain('long messages (slope 16384→65536 bytes)');
    const html = renderReport(a);
    expect(html).not.toMatch(/<script|https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
    const svg = html.match(/<svg[\s\S]*?<\/svg>/)![0];
    expect(svg.match(/<g class="series"/g)).toHaveLength(3);
    for (const name of ['sha256', 'sha3-256', 'ascon-hash256'])
      expect(svg).toContain(`data-algorithm="${name}"`);
    expect(html).toContain('Machine');
    expect(html).toContain(a.machine.cpuModel);
  });

  it('compares two runs with the ratio of their medians', () => {
    const html = renderComparison(a, b);
    expect(html).toContain('A: A (');
    expect(html).toContain('B: B (');
    const pick = (run: BenchmarkRun) =>
      run.series
        .find((s) => s.algorithm === 'sha3-256' && s.provider === 'hashq')!
        .lengths.find((l) => l.length === 64)!.cyclesPerByte.median;
    const ratio = (pick(b) / pick(a)).toFixed(2);
    expect(html).toMatch(
      new RegExp(`<td class="name">sha3-256</td>.*?<td[^>]*>${ratio.replace('.', '\\.')}</td>`),
    );
  });
});
