import { jsonbParam, rawRows } from '@hashq/database';
import type { SourceRef } from '@hashq/jobs';
import type { SourceVersion } from '@hashq/sources';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';

export const BATCH_ITEM_STATUSES = [
  'pending',
  'queued',
  'succeeded',
  'failed',
  'mismatch',
  'canceled',
] as const;
export type BatchItemStatus = (typeof BATCH_ITEM_STATUSES)[number];

/** One listed object, as the listing step inserts it. */
export interface NewBatchItem {
  name: string;
  source: SourceRef;
  size?: number;
  /** What the item is pinned to (e.g. the S3 listing's ETag, size and version id). */
  version?: SourceVersion;
  expected?: Record<string, string>;
  line?: number;
  /** The item fails at once (a bad line of a referenced manifest). */
  error?: { code: string; message: string };
}

/** An item row as the reports, the items endpoint and the hashing step read it. */
export interface BatchItemRow {
  seq: number;
  grp: number;
  name: string;
  source: SourceRef;
  size: number | null;
  version: SourceVersion | null;
  expected: Record<string, string> | null;
  line: number | null;
  status: BatchItemStatus;
  jobId: string | null;
  /** Lower-case hex by algorithm. */
  digests: Record<string, string> | null;
  errorCode: string | null;
  errorMessage: string | null;
}

/** What the hashing step reads of a pending item (a lean row: a group's rows live while it hashes). */
export type PendingItem = Pick<BatchItemRow, 'seq' | 'source' | 'size' | 'version' | 'expected'>;

/** The outcome of one small item hashed in a group. */
export interface ItemResult {
  seq: number;
  status: 'succeeded' | 'failed' | 'mismatch';
  size?: number;
  digests?: Record<string, string>;
  errorCode?: string;
  errorMessage?: string;
}

export interface BatchCounts {
  byStatus: Record<BatchItemStatus, number>;
  bytesDone: number;
  errorsByCode: Record<string, number>;
}

const ITEM_COLUMNS = `seq, grp, name, source, size, version, expected, line, status, job_id, digests,
  error_code, error_message`;

interface ItemRowRaw {
  seq: string;
  grp: string;
  name: string;
  source: SourceRef;
  size: string | null;
  version: SourceVersion | null;
  expected: Record<string, string> | null;
  line: string | null;
  status: BatchItemStatus;
  job_id: string | null;
  digests: Record<string, string> | null;
  error_code: string | null;
  error_message: string | null;
}

function toItem(row: ItemRowRaw): BatchItemRow {
  return {
    seq: Number(row.seq),
    grp: Number(row.grp),
    name: row.name,
    source: row.source,
    size: row.size === null ? null : Number(row.size),
    version: row.version,
    expected: row.expected,
    line: row.line === null ? null : Number(row.line),
    status: row.status,
    jobId: row.job_id,
    digests: row.digests,
    errorCode: row.error_code,
    errorMessage: row.error_message,
  };
}

/**
 * A listing page's items as insertItems takes them: one JSON array (jsonb_to_recordset, sent as
 * bytes: jsonbParam), where array parameters would cost node-postgres a literal built element by
 * element (~3 KB of garbage per item, most of a batch's allocations). Encoded before the page's
 * transaction, so that the item objects die young instead of living through it.
 */
export function encodeItems(items: readonly NewBatchItem[]): Buffer {
  return jsonbParam(
    items.map((item) => ({
      name: item.name,
      source: item.source,
      size: item.size,
      version: item.version,
      expected: item.expected,
      line: item.line,
      error_code: item.error?.code,
      error_message: item.error?.message,
    })),
  );
}

/**
 * One listing page (encodeItems) in one statement: items numbered from `firstSeq` in their order,
 * all in group `firstSeq` (a page is a hashing group). ON CONFLICT DO NOTHING: a page is never
 * there twice, whatever replays it.
 */
export async function insertItems(
  db: DataSource | EntityManager,
  batchId: string,
  firstSeq: number,
  items: Buffer,
): Promise<void> {
  await db.query(
    `INSERT INTO batch_items (batch_id, seq, grp, name, source, size, version, expected, line,
                             status, error_code, error_message, finished_at)
     SELECT $1, $2 + i.n - 1, $2, i.name, i.source, i.size, i.version, i.expected, i.line,
            CASE WHEN i.error_code IS NULL THEN 'pending' ELSE 'failed' END,
            i.error_code, i.error_message, CASE WHEN i.error_code IS NULL THEN NULL ELSE now() END
       FROM ROWS FROM (jsonb_to_recordset($3::jsonb)
                         AS (name text, source jsonb, size bigint, version jsonb, expected jsonb,
                             line bigint, error_code text, error_message text))
            WITH ORDINALITY
            AS i(name, source, size, version, expected, line, error_code, error_message, n)
     ON CONFLICT (batch_id, seq) DO NOTHING`,
    [batchId, firstSeq, items],
  );
}

/**
 * A group's results as writeResults takes them (one JSON array, as encodeItems): encoded before
 * the transaction, so that the result objects die young instead of living through it.
 */
export function encodeResults(results: readonly ItemResult[]): Buffer {
  return jsonbParam(results);
}

/**
 * Every statement on batch_items but the page inserts of the listing (insertItems, in the
 * listing's transaction) and the outcome of big items (batch_item_settle(), run by a trigger on
 * jobs). Results are written once: only a pending item takes one, so a group hashed twice (a
 * stalled worker, Redis lost) still counts each object once.
 */
@Injectable()
export class BatchItemsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The pending items of a group, in listing order. */
  async pendingOfGroup(batchId: string, group: number): Promise<PendingItem[]> {
    const rows = rawRows<Pick<ItemRowRaw, 'seq' | 'source' | 'size' | 'version' | 'expected'>>(
      await this.db.query(
        `SELECT seq, source, size, version, expected FROM batch_items
          WHERE batch_id = $1 AND grp = $2 AND status = 'pending' ORDER BY seq`,
        [batchId, group],
      ),
    );
    return rows.map((row) => ({
      seq: Number(row.seq),
      source: row.source,
      size: row.size === null ? null : Number(row.size),
      version: row.version,
      expected: row.expected,
    }));
  }

  /**
   * The results of a group (encodeResults) in one statement, then the batch ends if they were the
   * last. Returns how many items took their result (fewer when another run of the group got there
   * first).
   */
  async writeResults(batchId: string, rows: Buffer): Promise<number> {
    return this.db.transaction(async (tx) => {
      const [{ updated }] = rawRows<{ updated: number }>(
        await tx.query(
          `WITH u AS (
             UPDATE batch_items b
                SET status = r.status, size = coalesce(r.size, b.size), digests = r.digests,
                    error_code = r."errorCode", error_message = r."errorMessage", finished_at = now()
               FROM jsonb_to_recordset($2::jsonb)
                    AS r(seq bigint, status text, size bigint, digests jsonb, "errorCode" text,
                         "errorMessage" text)
              WHERE b.batch_id = $1 AND b.seq = r.seq AND b.status = 'pending'
              RETURNING 1)
           SELECT count(*)::int AS updated FROM u`,
          [batchId, rows],
        ),
      );
      await tx.query(`SELECT batch_try_finish($1)`, [batchId]);
      return updated;
    });
  }

  /**
   * A big item now runs as job `jobId`: pending → queued. If the job already ended (a replayed
   * group that finds the job it made before a crash), the item takes its outcome at once.
   */
  async linkJob(batchId: string, seq: number, jobId: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.query(
        `UPDATE batch_items SET status = 'queued', job_id = $3
          WHERE batch_id = $1 AND seq = $2 AND status = 'pending'`,
        [batchId, seq, jobId],
      );
      await tx.query(`SELECT batch_item_settle($1)`, [jobId]);
    });
  }

  /** Groups with pending items (each needs a live BullMQ group job). */
  async pendingGroups(batchId: string): Promise<number[]> {
    const rows = rawRows<{ grp: string }>(
      await this.db.query(
        `SELECT DISTINCT grp FROM batch_items WHERE batch_id = $1 AND status = 'pending' ORDER BY grp`,
        [batchId],
      ),
    );
    return rows.map((row) => Number(row.grp));
  }

  /** Items by status, bytes of the ended ones, and the error codes of the failed ones. */
  async counts(batchId: string): Promise<BatchCounts> {
    const rows = rawRows<{
      status: BatchItemStatus;
      error_code: string | null;
      n: string;
      bytes: string;
    }>(
      await this.db.query(
        `SELECT status, error_code, count(*) AS n, coalesce(sum(size), 0) AS bytes
           FROM batch_items WHERE batch_id = $1 GROUP BY status, error_code`,
        [batchId],
      ),
    );
    const byStatus = Object.fromEntries(BATCH_ITEM_STATUSES.map((s) => [s, 0])) as Record<
      BatchItemStatus,
      number
    >;
    const errorsByCode: Record<string, number> = {};
    let bytesDone = 0;
    for (const row of rows) {
      byStatus[row.status] += Number(row.n);
      if (row.status !== 'pending' && row.status !== 'queued') bytesDone += Number(row.bytes);
      if (row.error_code && row.status !== 'canceled') {
        errorsByCode[row.error_code] = (errorsByCode[row.error_code] ?? 0) + Number(row.n);
      }
    }
    return { byStatus, bytesDone, errorsByCode };
  }

  /** A page of items after `afterSeq` in listing order (keyset: memory flat whatever the batch). */
  async page(
    batchId: string,
    query: { statuses?: readonly BatchItemStatus[]; afterSeq?: number; limit: number },
  ): Promise<BatchItemRow[]> {
    const rows = rawRows<ItemRowRaw>(
      await this.db.query(
        `SELECT ${ITEM_COLUMNS} FROM batch_items
          WHERE batch_id = $1 AND seq > $2 AND ($3::text[] IS NULL OR status = ANY($3))
          ORDER BY seq LIMIT $4`,
        [batchId, query.afterSeq ?? 0, query.statuses ?? null, query.limit],
      ),
    );
    return rows.map(toItem);
  }
}
