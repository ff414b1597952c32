import type { SourceRef } from '@hashq/jobs';

/** Where an item of a batch stands; a report lists each item once. */
export type ItemStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'mismatch' | 'canceled';

export interface ReportDigest {
  hex: string;
  base64: string;
}

/** One item as the report writers take it (the batch's item row). */
export interface ReportRow {
  /** Relative to the batch's base (the directory, the prefix): what the report names. */
  name: string;
  source: SourceRef;
  size?: number | null;
  status: ItemStatus;
  errorCode?: string | null;
  errorMessage?: string | null;
  /** Computed digests by algorithm (a mismatch carries what the data really hashes to). */
  digests: Record<string, ReportDigest>;
  /** Verify mode: the expected digests (lowercase hex) by algorithm. */
  expected?: Record<string, string> | null;
}

export type ReportFormat = 'sha256sum' | 'bsd' | 'csv' | 'jsonl';

export interface ReportOptions {
  /** sha256sum and bsd: the one algorithm written (rows without its digest are left out). */
  algorithm: string;
  /** csv: one digest column per algorithm, in this order. */
  algorithms: readonly string[];
}
