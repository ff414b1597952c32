import { setFlagsFromString } from 'node:v8';

/** The old space may grow by this much past what the last full GC kept before the next one. */
export const HEAP_GROWING_PERCENT = 50;

/**
 * Bounds V8's heap growth in a long-running app: a full GC once the old space has grown by
 * HEAP_GROWING_PERCENT over what the last one kept, instead of V8's default of up to 4×. A batch's
 * short-lived data (a group's rows and results, a report's pages) outlives a scavenge or two and is
 * promoted; with the default it piled up for ~100 MiB before the first full GC, so the peak RSS grew
 * with the batch's length (docs/batches.md, Memory). An explicit --heap-growing-percent wins.
 */
export function boundHeapGrowth(execArgv: readonly string[] = process.execArgv): boolean {
  if (execArgv.some((arg) => /^--heap[-_]growing[-_]percent/.test(arg))) return false;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return true;
}
