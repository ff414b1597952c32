/**
 * eBASH's figures for the SiFive U54 (riscv64): the data file
 * libs/native/bench/data/ebash-u54.json (copied from the eBASH NISTLWC page;
 * its "source" field names the page and its version), shown beside our runs.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface ReferenceRow {
  /** eBASH's primitive name, e.g. "xoodyakv1" */
  primitive: string;
  q1: number;
  median: number;
  q3: number;
  spread: boolean;
}

export interface Reference {
  source: string;
  machine: string;
  arch: string;
  unit: string;
  /** keyed by message length ("8", "64", …) or "long", sorted by median */
  lengths: Record<string, ReferenceRow[]>;
}

interface ReferenceFile {
  source: string;
  machine: string;
  unit: string;
  tables: Record<
    string,
    Record<string, { q1: number; median: number; q3: number; highVariance: boolean }>
  >;
}

const RELATIVE = path.join('libs', 'native', 'bench', 'data', 'ebash-u54.json');

/**
 * The first `relative` path that exists above this module or above the
 * working directory (__dirname is absent when this module runs as ESM).
 */
export function findUp(relative: string): string | undefined {
  const starts = [typeof __dirname === 'string' ? __dirname : undefined, process.cwd()];
  for (const start of starts) {
    if (!start) continue;
    for (let dir = start; ; dir = path.dirname(dir)) {
      if (fs.existsSync(path.join(dir, relative))) return path.join(dir, relative);
      if (path.dirname(dir) === dir) break;
    }
  }
  return undefined;
}

/** The data file of the eBASH U54 figures, when the project has it. */
export function loadU54Reference(): Reference | undefined {
  const file = findUp(RELATIVE);
  if (!file) return undefined;
  const data = JSON.parse(fs.readFileSync(file, 'utf8')) as ReferenceFile;
  const lengths: Record<string, ReferenceRow[]> = {};
  for (const [key, table] of Object.entries(data.tables)) {
    lengths[key] = Object.entries(table)
      .map(([primitive, q]) => ({
        primitive,
        q1: q.q1,
        median: q.median,
        q3: q.q3,
        spread: q.highVariance,
      }))
      .sort((a, b) => a.median - b.median);
  }
  return {
    source: data.source,
    machine: data.machine,
    arch: data.machine.split(';')[0].trim(),
    unit: data.unit,
    lengths,
  };
}
