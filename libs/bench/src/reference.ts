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
  tables: Record<string, Record<string, { q1: number; median: number; q3: number; highVariance: boolean }>>;
}

const RELATIVE = path.join('libs', 'native', 'bench', 'data', 'ebash-u54.json');

/** The data file, looked for from the working directory upwards. */
export function loadU54Reference(): Reference | undefined {
  let dir = process.cwd();
  for (let up = 0; up < 6; up++, dir = path.dirname(dir)) {
    const file = path.join(dir, RELATIVE);
    if (!fs.existsSync(file)) continue;
    const data = JSON.parse(fs.readFileSync(file, 'utf8')) as ReferenceFile;
    const lengths: Record<string, ReferenceRow[]> = {};
    for (const [key, table] of Object.entries(data.tables)) {
      lengths[key] = Object.entries(table)
        .map(([primitive, q]) => ({ primitive, q1: q.q1, median: q.median, q3: q.q3, spread: q.highVariance }))
        .sort((a, b) => a.median - b.median);
    }
    return { source: data.source, machine: data.machine, arch: data.machine.split(';')[0].trim(), unit: data.unit, lengths };
  }
  return undefined;
}
