import type { BatchCounts, BatchItemRow } from '@hashq/batches/batch-items.repository';
import type { BatchRow } from '@hashq/batches/batches.repository';
import { publicSource } from '@hashq/sources';

/** GET /v1/batches/:id: the batch, its progress counted from its item rows. */
export interface BatchResponse {
  id: string;
  status: BatchRow['status'];
  source: unknown;
  algorithms: string[];
  outputLength?: number;
  priority?: number;
  verify?: 's3';
  /** total: known once the listing is done (null before). */
  items: {
    total: number | null;
    listed: number;
    done: number;
    succeeded: number;
    failed: number;
    mismatched: number;
    canceled: number;
    pending: number;
  };
  bytes: { total: number | null; listed: number; done: number };
  listing: { done: boolean };
  /** Since the batch started; ETA once the total is known and something was done. */
  rate: { objectsPerSecond: number; bytesPerSecond: number; etaSeconds: number | null };
  errors: Record<string, number>;
  error: { code: string; message: string; details: unknown } | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

export interface BatchSummary {
  id: string;
  status: BatchRow['status'];
  source: unknown;
  algorithms: string[];
  itemsListed: number;
  createdAt: string;
  finishedAt: string | null;
}

export interface BatchListResponse {
  items: BatchSummary[];
  nextCursor: string | null;
}

export interface BatchItemResponse {
  seq: number;
  name: string;
  size: number | null;
  version: Record<string, unknown> | null;
  line: number | null;
  status: BatchItemRow['status'];
  digests: Record<string, { hex: string; base64: string }> | null;
  expected: Record<string, string> | null;
  jobId: string | null;
  error: { code: string; message: string | null } | null;
}

export interface BatchItemListResponse {
  items: BatchItemResponse[];
  nextCursor: string | null;
}

export function toBatchResponse(
  batch: BatchRow,
  counts: BatchCounts,
  now = new Date(),
): BatchResponse {
  const s = counts.byStatus;
  const done = s.succeeded + s.failed + s.mismatch + s.canceled;
  const total = batch.listingDone ? batch.listedItems : null;
  const end = batch.finishedAt ?? now;
  const seconds = batch.startedAt
    ? Math.max((end.getTime() - batch.startedAt.getTime()) / 1000, 0.001)
    : 0;
  const objectsPerSecond = seconds > 0 ? done / seconds : 0;
  const bytesPerSecond = seconds > 0 ? counts.bytesDone / seconds : 0;
  const remaining = total === null ? null : total - done;
  return {
    id: batch.id,
    status: batch.status,
    source: publicSource(batch.source),
    algorithms: batch.algorithms,
    ...(batch.options.outputLength ? { outputLength: batch.options.outputLength } : {}),
    ...(batch.options.priority ? { priority: batch.options.priority } : {}),
    ...(batch.options.verify ? { verify: batch.options.verify } : {}),
    items: {
      total,
      listed: batch.listedItems,
      done,
      succeeded: s.succeeded,
      failed: s.failed,
      mismatched: s.mismatch,
      canceled: s.canceled,
      pending: s.pending + s.queued,
    },
    bytes: {
      total: batch.listingDone ? batch.listedBytes : null,
      listed: batch.listedBytes,
      done: counts.bytesDone,
    },
    listing: { done: batch.listingDone },
    rate: {
      objectsPerSecond: round(objectsPerSecond),
      bytesPerSecond: round(bytesPerSecond),
      etaSeconds: eta(remaining, objectsPerSecond, batch.finishedAt !== null),
    },
    errors: counts.errorsByCode,
    error: batch.errorCode
      ? {
          code: batch.errorCode,
          message: batch.errorMessage ?? '',
          details: batch.errorDetails ?? null,
        }
      : null,
    createdAt: batch.createdAt.toISOString(),
    startedAt: batch.startedAt?.toISOString() ?? null,
    finishedAt: batch.finishedAt?.toISOString() ?? null,
  };
}

export function toBatchSummary(batch: BatchRow): BatchSummary {
  return {
    id: batch.id,
    status: batch.status,
    source: publicSource(batch.source),
    algorithms: batch.algorithms,
    itemsListed: batch.listedItems,
    createdAt: batch.createdAt.toISOString(),
    finishedAt: batch.finishedAt?.toISOString() ?? null,
  };
}

export function toItemResponse(item: BatchItemRow): BatchItemResponse {
  return {
    seq: item.seq,
    name: item.name,
    size: item.size,
    version: item.version,
    line: item.line,
    status: item.status,
    digests: item.digests
      ? Object.fromEntries(
          Object.entries(item.digests).map(([algorithm, hex]) => [
            algorithm,
            { hex, base64: Buffer.from(hex, 'hex').toString('base64') },
          ]),
        )
      : null,
    expected: item.expected,
    jobId: item.jobId,
    error: item.errorCode ? { code: item.errorCode, message: item.errorMessage } : null,
  };
}

function eta(remaining: number | null, rate: number, finished: boolean): number | null {
  if (finished || remaining === 0) return 0;
  if (remaining === null || rate === 0) return null;
  return round(remaining / rate);
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
