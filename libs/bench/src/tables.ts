/**
 * Rows of the eBASH-style tables, shared by the terminal and HTML reports:
 * per message length (and "long"), sorted by median cycles/byte.
 */
import type { Quartiles } from './stats';
import type { BenchmarkRun, SeriesResult } from './types';

export interface TableRow {
  algorithm: string;
  provider: string;
  implementation: string;
  cyclesPerByte: Quartiles;
  spread: boolean;
  nsPerByte: number;
  mbPerSecond: number;
  /** ESTIMATE: core cycles per byte via the calibration loop */
  coreCyclesPerByte: number;
}

export type TableKey = number | 'long';

/** The lengths to tabulate: every measured one, then "long". */
export function tableKeys(run: BenchmarkRun): TableKey[] {
  return [...run.settings.lengths, 'long'];
}

function pick(
  series: SeriesResult,
  key: TableKey,
): { cyclesPerByte: Quartiles; spread: boolean } | undefined {
  if (key === 'long') return series.long;
  return series.lengths.find((l) => l.length === key);
}

export function tableRows(run: BenchmarkRun, key: TableKey): TableRow[] {
  const { counterHz, coreHzEstimate } = run.machine;
  const rows: TableRow[] = [];
  for (const s of run.series) {
    const r = pick(s, key);
    if (!r) continue;
    const nsPerByte = (r.cyclesPerByte.median * 1e9) / counterHz;
    rows.push({
      algorithm: s.algorithm,
      provider: s.provider,
      implementation: s.implementation,
      cyclesPerByte: r.cyclesPerByte,
      spread: r.spread,
      nsPerByte,
      mbPerSecond: nsPerByte > 0 ? 1e3 / nsPerByte : Infinity,
      coreCyclesPerByte: (r.cyclesPerByte.median * coreHzEstimate) / counterHz,
    });
  }
  return rows.sort((a, b) => a.cyclesPerByte.median - b.cyclesPerByte.median);
}

export function keyTitle(key: TableKey, run: BenchmarkRun): string {
  if (key === 'long')
    return `long messages (slope ${run.settings.longFrom}→${run.settings.longTo} bytes)`;
  return key === 0 ? '0 bytes (ticks per message)' : `${key} bytes`;
}

export function fmt(x: number): string {
  if (!Number.isFinite(x)) return '∞';
  if (x >= 1000) return x.toFixed(0);
  if (x >= 100) return x.toFixed(1);
  return x.toFixed(2);
}

export function seriesName(s: { algorithm: string; provider: string }): string {
  return s.provider === 'hashq' ? s.algorithm : `${s.algorithm} (${s.provider})`;
}

/** eBASH-style plain text: "25% 50% 75%" per length, sorted by median. */
export function textTables(
  run: BenchmarkRun,
  keys: TableKey[] = [8, 64, 576, 1536, 4096, 'long'],
): string {
  const out: string[] = [];
  const counter = `${run.machine.counter} ticks at ${(run.machine.counterHz / 1e9).toFixed(3)} GHz`;
  for (const key of keys) {
    if (key !== 'long' && !run.settings.lengths.includes(key)) continue;
    out.push(`\nCycles/byte for ${keyTitle(key, run)} [${counter}]`);
    out.push(
      `${'25%'.padStart(9)}${'50%'.padStart(9)}${'75%'.padStart(9)}   ${'algorithm'.padEnd(34)}${'impl'.padEnd(15)}${'ns/B'.padStart(8)}${'MB/s'.padStart(9)}${'~core c/B'.padStart(11)}`,
    );
    for (const r of tableRows(run, key)) {
      const q = r.cyclesPerByte;
      const mark = r.spread ? '?' : ' ';
      out.push(
        `${fmt(q.q1).padStart(9)}${fmt(q.median).padStart(9)}${fmt(q.q3).padStart(9)} ${mark} ` +
          `${seriesName(r).padEnd(34)}${r.implementation.padEnd(15)}${fmt(r.nsPerByte).padStart(8)}` +
          `${fmt(r.mbPerSecond).padStart(9)}${fmt(r.coreCyclesPerByte).padStart(11)}`,
      );
    }
  }
  return out.join('\n');
}
