/**
 * The statistics of an eBASH-style table: quartiles of many measurements,
 * the per-byte slope for "long messages", and the spread flag.
 */

export interface Quartiles {
  q1: number;
  median: number;
  q3: number;
}

/**
 * The p-quantile (0 ≤ p ≤ 1) of ascending `sorted` values, interpolated
 * linearly between the two nearest order statistics (position p·(n−1),
 * "type 7", the default of R and NumPy).
 */
export function quantile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) throw new RangeError('quantile of no values');
  const pos = p * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

export function quartiles(values: readonly number[]): Quartiles {
  const sorted = [...values].sort((a, b) => a - b);
  return { q1: quantile(sorted, 0.25), median: quantile(sorted, 0.5), q3: quantile(sorted, 0.75) };
}

export function scaleQuartiles(q: Quartiles, factor: number): Quartiles {
  return { q1: q.q1 * factor, median: q.median * factor, q3: q.q3 * factor };
}

/**
 * Per-byte cost of long messages: the slope between the measurements at
 * two large lengths, quartile by quartile (fixed costs cancel out), put back
 * in order (noise can cross them) and clamped at 0.
 */
export function longSlope(
  short: { length: number; cycles: Quartiles },
  long: { length: number; cycles: Quartiles },
): Quartiles {
  const span = long.length - short.length;
  if (span <= 0) throw new RangeError('the long length must exceed the short one');
  const slope = (k: keyof Quartiles) => Math.max(0, (long.cycles[k] - short.cycles[k]) / span);
  const [q1, median, q3] = [slope('q1'), slope('median'), slope('q3')].sort((a, b) => a - b);
  return { q1, median, q3 };
}

/** Quartiles further apart than this fraction of the median are flagged. */
export const SPREAD_LIMIT = 0.1;

/** eBASH marks measurements with a large variance with "?": here, when
 * (q3 − q1) exceeds SPREAD_LIMIT × median. */
export function isSpread(q: Quartiles): boolean {
  return q.q3 - q.q1 > SPREAD_LIMIT * Math.abs(q.median);
}

export function median(values: readonly number[]): number {
  return quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}
