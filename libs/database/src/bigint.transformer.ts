import type { ValueTransformer } from 'typeorm';

/**
 * PostgreSQL bigint arrives from pg as a string (it may exceed 2^53). Byte counts of real files
 * stay far below 2^53 (8 PiB), so hashq exposes them as numbers and refuses anything larger.
 */
export const bigintAsNumber: ValueTransformer = {
  to: (value: number | null | undefined) => value,
  from: (value: string | number | null): number | null => {
    if (value === null || value === undefined) return null;
    const parsed = Number(value);
    if (!Number.isSafeInteger(parsed))
      throw new RangeError(`bigint out of the safe integer range: ${value}`);
    return parsed;
  },
};
