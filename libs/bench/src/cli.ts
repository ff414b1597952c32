#!/usr/bin/env node
/**
 * npm run bench — the eBASH-style benchmark on this machine, without the service.
 *
 *   npm run bench -- [--quick] [--algorithms sha256,ascon-hash256] [--implementations hashq,hash-wasm]
 *                    [--lengths 8,64,4096] [--out bench-results] [--label text]
 *                    [--compare earlier.json] [--save]
 *
 * Prints the tables, writes <out>/bench-<time>.json and .html (and
 * compare-<time>.html with --compare); --save records the run in PostgreSQL
 * (DATABASE_URL, DATABASE_SCHEMA as for the service).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { loadConfig } from '@hashq/config';

import { renderComparison, renderReport } from './html';
import { type Progress, runBenchmark } from './measure';
import { saveRunTo } from './store';
import { textTables } from './tables';
import type { BenchmarkRun, Provider } from './types';

function parseArgs(argv: string[]) {
  const value = (flag: string) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const list = (flag: string) => value(flag)?.split(',').filter(Boolean);
  return {
    quick: argv.includes('--quick'),
    save: argv.includes('--save'),
    algorithms: list('--algorithms'),
    providers: list('--implementations') as Provider[] | undefined,
    lengths: list('--lengths')?.map(Number),
    out: value('--out') ?? 'bench-results',
    label: value('--label'),
    compare: value('--compare'),
  };
}

function progressBar(p: Progress): void {
  if (!process.stderr.isTTY && p.done < p.total) return;
  const width = 30;
  const filled = Math.round((p.done / Math.max(p.total, 1)) * width);
  const what = p.done < p.total ? `${p.algorithm} (${p.provider})` : 'done';
  const line = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${p.done}/${p.total} ${what}`;
  process.stderr.write(
    process.stderr.isTTY ? `\r${line.padEnd(80)}${p.done === p.total ? '\n' : ''}` : `${line}\n`,
  );
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const database = args.save ? loadConfig() : undefined; // a bad configuration stops before measuring
  const run = await runBenchmark(args, progressBar);
  const m = run.machine;
  console.log(
    `${m.arch} · ${m.cpuModel} · ${m.cores} cores · ${m.os} · Node ${m.node} · @hashq/native ${m.libraryVersion}\n` +
      `counter ${m.counter} at ${(m.counterHz / 1e9).toFixed(4)} GHz (measured); core ≈ ${(m.coreHzEstimate / 1e9).toFixed(2)} GHz (estimate); ` +
      `overhead ${run.settings.counterOverhead} ticks subtracted; ${(run.durationMs / 1000).toFixed(1)} s`,
  );
  console.log(textTables(run));
  if (database) {
    run.id = await saveRunTo(database, run);
    console.log(`\nsaved in PostgreSQL as run ${run.id}`);
  }
  fs.mkdirSync(args.out, { recursive: true });
  const stamp = run.startedAt.replace(/[:.]/g, '-');
  const base = path.join(args.out, `bench-${stamp}`);
  fs.writeFileSync(`${base}.json`, JSON.stringify(run, null, 1));
  fs.writeFileSync(`${base}.html`, renderReport(run));
  console.log(`\nwrote ${base}.json and ${base}.html`);
  if (args.compare) {
    const earlier = JSON.parse(fs.readFileSync(args.compare, 'utf8')) as BenchmarkRun;
    const file = path.join(args.out, `compare-${stamp}.html`);
    fs.writeFileSync(file, renderComparison(earlier, run));
    console.log(`wrote ${file} (A = ${args.compare}, B = this run)`);
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
