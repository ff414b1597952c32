/**
 * eBASH's figures for the SiFive U54 (riscv64), shipped as a data file:
 * libs/bench/data/ebash-u54.json, copied from the eBASH NISTLWC page (its
 * "source" field names the page and version).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface ReferenceRow {
  primitive: string;
  algorithm: string;
  q1: number;
  median: number;
  q3: number;
  spread: boolean;
}

export interface Reference {
  source: string;
  machine: { arch: string; cpu: string; counter: string };
  unit: string;
  /** keyed by message length ("8", "64", …) or "long" */
  lengths: Record<string, ReferenceRow[]>;
}

/** The data file, looked for above this module (source tree, dist/ builds). */
export function loadU54Reference(): Reference | undefined {
  let dir = __dirname;
  for (let up = 0; up < 6; up++) {
    for (const file of [path.join(dir, 'data', 'ebash-u54.json'), path.join(dir, 'libs', 'bench', 'data', 'ebash-u54.json')]) {
      if (fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, 'utf8')) as Reference;
    }
    dir = path.dirname(dir);
  }
  return undefined;
}
