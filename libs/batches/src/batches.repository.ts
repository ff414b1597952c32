import { rawRows } from '@hashq/database';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';

import { insertItems } from './batch-items.repository';

export const BATCH_STATUSES = [
  'queued',
  'running',
  'succeeded',
  'completed_with_failures',
  'failed',
  'canceled',
] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];
export const ACTIVE_BATCH_STATUSES: readonly BatchStatus[] = ['queued', 'running'];

/** The stored source of a batch (normalized by the API; see docs/batches.md). */
export interface BatchSource {
  type: 'directory' | 's3' | 'manifest' | 'sums';
  [field: string]: unknown;
}

/** Hashing options of a batch, as stored in batches.options. */
export interface BatchOptions {
  outputLength?: number;
  priority?: number;
  /** s3 sources: compare with the checksums S3 stores (the jobs' s3Checksum). */
  verify?: 's3';
}

export interface BatchRow {
  id: string;
  tenantId: string;
  status: BatchStatus;
  source: BatchSource;
  algorithms: string[];
  options: BatchOptions;
  fence: number;
  listCursor: string | null;
  listedItems: number;
  listedBytes: number;
  listingDone: boolean;
  dispatchRound: number;
  errorCode: string | null;
  errorMessage: string | null;
  errorDetails: unknown;
  createdAt: Date;
  updatedAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

export interface NewBatch {
  tenantId: string;
  source: BatchSource;
  /** Inline manifest or SUM file, read by the listing step. */
  manifest?: string;
  algorithms: string[];
  options: BatchOptions;
  idempotencyKey?: string;
  requestHash?: string;
}

export type BatchInsertResult =
  | { kind: 'created'; batch: BatchRow }
  | { kind: 'existing'; batch: BatchRow; sameRequest: boolean };

/** The batch as the listing step holds it under its lease. */
export interface LeasedBatch {
  id: string;
  /** The owner: its file_roots, allowed_hosts and allowed_buckets narrow what is listed. */
  tenantId: string;
  fence: number;
  source: BatchSource;
  manifest: string | null;
  algorithms: string[];
  options: BatchOptions;
  listCursor: string | null;
  listedItems: number;
  dispatchRound: number;
}

/** A page of the listing, committed with its cursor. */
export interface ListedPage {
  /** The page's items, encoded (encodeItems). */
  items: Buffer;
  /** How many items `items` holds. */
  count: number;
  /** The cursor after this page; null when the listing is finished. */
  cursor: string | null;
  bytes: number;
}

const COLUMNS = `id, tenant_id, status, source, algorithms, options, fence, list_cursor, listed_items,
  listed_bytes, listing_done, dispatch_round, error_code, error_message, error_details, created_at,
  updated_at, started_at, finished_at`;

interface Row {
  id: string;
  tenant_id: string;
  status: BatchStatus;
  source: BatchSource;
  algorithms: string[];
  options: BatchOptions | null;
  fence: string;
  list_cursor: string | null;
  listed_items: string;
  listed_bytes: string;
  listing_done: boolean;
  dispatch_round: number;
  error_code: string | null;
  error_message: string | null;
  error_details: unknown;
  created_at: Date;
  updated_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  request_hash?: string | null;
}

function toBatch(row: Row): BatchRow {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    status: row.status,
    source: row.source,
    algorithms: row.algorithms,
    options: row.options ?? {},
    fence: Number(row.fence),
    listCursor: row.list_cursor,
    listedItems: Number(row.listed_items),
    listedBytes: Number(row.listed_bytes),
    listingDone: row.listing_done,
    dispatchRound: row.dispatch_round,
    errorCode: row.error_code,
    errorMessage: row.error_message,
    errorDetails: row.error_details,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}

/** A listing whose lease nobody renews (or never taken): the reconciler dispatches it again. */
const LISTING_DISPATCHABLE = `(status = 'queued' OR (status = 'running' AND NOT listing_done
  AND (lease_expires_at IS NULL OR lease_expires_at < now())))`;

/**
 * Every statement on the batches table. The listing step's writes are fenced (fence = the lease's):
 * a listing that lost its lease (a stalled worker coming back) writes nothing. Item rows are
 * batch-items.repository's; a page of them is inserted here in the transaction of its cursor.
 */
@Injectable()
export class BatchesRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async insert(batch: NewBatch): Promise<BatchInsertResult> {
    const created = rawRows<Row>(
      await this.db.query(
        `INSERT INTO batches (tenant_id, status, source, manifest, algorithms, options, idempotency_key, request_hash)
         VALUES ($1, 'queued', $2, $3, $4, $5, $6, $7)
         ON CONFLICT (tenant_id, idempotency_key) DO NOTHING
         RETURNING ${COLUMNS}`,
        [
          batch.tenantId,
          JSON.stringify(batch.source),
          batch.manifest ?? null,
          batch.algorithms,
          JSON.stringify(batch.options),
          batch.idempotencyKey ?? null,
          batch.requestHash ?? null,
        ],
      ),
    );
    if (created.length === 1) return { kind: 'created', batch: toBatch(created[0]) };
    const [existing] = rawRows<Row>(
      await this.db.query(
        `SELECT ${COLUMNS}, request_hash FROM batches WHERE tenant_id = $1 AND idempotency_key = $2`,
        [batch.tenantId, batch.idempotencyKey],
      ),
    );
    return {
      kind: 'existing',
      batch: toBatch(existing),
      sameRequest: existing.request_hash === (batch.requestHash ?? null),
    };
  }

  /** Batches queued or running in the whole deployment (BATCH_MAX_ACTIVE). */
  async countActive(): Promise<number> {
    const [row] = rawRows<{ n: string }>(
      await this.db.query(
        `SELECT count(*) AS n FROM batches WHERE status IN ('queued', 'running')`,
      ),
    );
    return Number(row.n);
  }

  /** The batch of `tenantId` (another tenant's batch is as missing as an unknown one). */
  async find(id: string, tenantId?: string): Promise<BatchRow | null> {
    const rows = rawRows<Row>(
      await this.db.query(
        `SELECT ${COLUMNS} FROM batches WHERE id = $1 AND ($2::text IS NULL OR tenant_id = $2)`,
        [id, tenantId ?? null],
      ),
    );
    return rows.length === 1 ? toBatch(rows[0]) : null;
  }

  /** Newest first, keyset pages on (created_at, id) like jobs. */
  async list(query: {
    tenantId: string;
    status?: BatchStatus;
    limit: number;
    after?: string;
  }): Promise<BatchRow[]> {
    const rows = rawRows<Row>(
      await this.db.query(
        `SELECT ${COLUMNS} FROM batches b
          WHERE tenant_id = $1 AND ($2::text IS NULL OR status = $2)
            AND ($3::uuid IS NULL OR (created_at, id) <
                 (SELECT c.created_at, c.id FROM batches c WHERE c.id = $3))
          ORDER BY created_at DESC, id DESC LIMIT $4`,
        [query.tenantId, query.status ?? null, query.after ?? null, query.limit],
      ),
    );
    return rows.map(toBatch);
  }

  /**
   * Takes the listing for `leaseSeconds` (fence + 1). Null when the batch is no longer queued, or its
   * listing is done. The first lease starts the batch.
   */
  async leaseListing(id: string, owner: string, leaseSeconds: number): Promise<LeasedBatch | null> {
    const [row] = rawRows<{
      id: string;
      tenant_id: string;
      fence: string;
      source: BatchSource;
      manifest: string | null;
      algorithms: string[];
      options: BatchOptions;
      list_cursor: string | null;
      listed_items: string;
      dispatch_round: number;
    }>(
      await this.db.query(
        `UPDATE batches
            SET fence = fence + 1, status = 'running', lease_owner = $2,
                lease_expires_at = now() + make_interval(secs => $3),
                started_at = coalesce(started_at, now()), updated_at = now()
          WHERE id = $1 AND (status = 'queued' OR (status = 'running' AND NOT listing_done))
          RETURNING id, tenant_id, fence, source, manifest, algorithms, options, list_cursor,
                    listed_items, dispatch_round`,
        [id, owner, leaseSeconds],
      ),
    );
    if (!row) return null;
    return {
      id: row.id,
      tenantId: row.tenant_id,
      fence: Number(row.fence),
      source: row.source,
      manifest: row.manifest,
      algorithms: row.algorithms,
      options: row.options ?? {},
      listCursor: row.list_cursor,
      listedItems: Number(row.listed_items),
      dispatchRound: row.dispatch_round,
    };
  }

  /**
   * Commits one listing page: its items and the cursor after them, in one transaction, fenced and
   * renewing the lease. Items are numbered on from listed_items, so a page is never inserted twice
   * (a replay after a crash starts from the committed cursor). False when the lease was lost or the
   * batch canceled: nothing was written. The last page (cursor null) ends the listing, and the
   * batch too when nothing is left to hash.
   */
  async commitPage(
    batch: LeasedBatch,
    page: ListedPage,
    leaseSeconds: number,
  ): Promise<{ committed: boolean; firstSeq: number }> {
    return this.db.transaction(async (tx) => {
      const [row] = rawRows<{ listed_items: string }>(
        await tx.query(
          `UPDATE batches
              SET list_cursor = $3, listed_items = listed_items + $4, listed_bytes = listed_bytes + $5,
                  listing_done = $6, lease_expires_at = now() + make_interval(secs => $7),
                  updated_at = now()
            WHERE id = $1 AND fence = $2 AND status = 'running' AND NOT listing_done
            RETURNING listed_items`,
          [
            batch.id,
            batch.fence,
            page.cursor,
            page.count,
            page.bytes,
            page.cursor === null,
            leaseSeconds,
          ],
        ),
      );
      if (!row) return { committed: false, firstSeq: 0 };
      const firstSeq = Number(row.listed_items) - page.count + 1;
      if (page.count > 0) await insertItems(tx, batch.id, firstSeq, page.items);
      if (page.cursor === null) await this.tryFinish(batch.id, tx);
      return { committed: true, firstSeq };
    });
  }

  /** Ends the batch when its listing is done and no item is left (see batch_try_finish()). */
  async tryFinish(id: string, db: DataSource | EntityManager = this.db): Promise<string | null> {
    const [row] = rawRows<{ ended: string | null }>(
      await db.query(`SELECT batch_try_finish($1) AS ended`, [id]),
    );
    return row.ended;
  }

  /**
   * The batch itself could not run (bucket missing, manifest unreadable, too many items): failed,
   * fenced by the listing's lease; items not hashed yet are canceled.
   */
  async failListing(
    batch: { id: string; fence: number },
    error: { code: string; message: string; details?: unknown },
  ): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const rows = rawRows(
        await tx.query(
          `UPDATE batches
              SET status = 'failed', error_code = $3, error_message = $4, error_details = $5,
                  finished_at = now(), updated_at = now(), lease_owner = NULL, lease_expires_at = NULL
            WHERE id = $1 AND fence = $2 AND status = 'running'
            RETURNING id`,
          [
            batch.id,
            batch.fence,
            error.code,
            error.message,
            error.details === undefined ? null : JSON.stringify(error.details),
          ],
        ),
      );
      if (rows.length === 0) return false;
      await tx.query(
        `UPDATE batch_items SET status = 'canceled', finished_at = now()
          WHERE batch_id = $1 AND status = 'pending'`,
        [batch.id],
      );
      return true;
    });
  }

  /**
   * Cancels a queued or running batch: its pending items are canceled; returns the jobs of its big
   * items still queued or running (the caller cancels them as jobs). Null when there is no such
   * batch; the batch as it is when it had already ended.
   */
  async cancel(
    id: string,
    tenantId: string,
  ): Promise<{ batch: BatchRow; canceled: boolean; jobIds: string[] } | null> {
    return this.db.transaction(async (tx) => {
      const canceled = rawRows<Row>(
        await tx.query(
          `UPDATE batches
              SET status = 'canceled', finished_at = now(), updated_at = now(),
                  lease_owner = NULL, lease_expires_at = NULL
            WHERE id = $1 AND tenant_id = $2 AND status IN ('queued', 'running')
            RETURNING ${COLUMNS}`,
          [id, tenantId],
        ),
      );
      if (canceled.length === 0) {
        const batch = await this.find(id, tenantId);
        return batch ? { batch, canceled: false, jobIds: [] } : null;
      }
      await tx.query(
        `UPDATE batch_items SET status = 'canceled', finished_at = now()
          WHERE batch_id = $1 AND status = 'pending'`,
        [id],
      );
      const jobs = rawRows<{ job_id: string }>(
        await tx.query(
          `SELECT job_id FROM batch_items WHERE batch_id = $1 AND status = 'queued' AND job_id IS NOT NULL`,
          [id],
        ),
      );
      return { batch: toBatch(canceled[0]), canceled: true, jobIds: jobs.map((j) => j.job_id) };
    });
  }

  /**
   * Runs the failed items of an ended batch again (mismatches stay: they are answers, not
   * failures): they go back to pending in a new dispatch round. A batch whose listing failed goes
   * back to queued and lists on from its cursor. Returns the batch and the groups to dispatch, or
   * null when it is not a batch of this tenant; `retried: false` when it has nothing to retry.
   */
  async retry(
    id: string,
    tenantId: string,
  ): Promise<{ batch: BatchRow; retried: boolean; groups: number[] } | null> {
    return this.db.transaction(async (tx) => {
      const [current] = rawRows<Row>(
        await tx.query(
          `SELECT ${COLUMNS} FROM batches WHERE id = $1 AND tenant_id = $2 FOR UPDATE`,
          [id, tenantId],
        ),
      );
      if (!current) return null;
      const failedItems = rawRows<{ grp: string }>(
        await tx.query(
          `UPDATE batch_items
              SET status = 'pending', job_id = NULL, digests = NULL, error_code = NULL,
                  error_message = NULL, finished_at = NULL
            WHERE batch_id = $1 AND status = 'failed'
            RETURNING grp`,
          [id],
        ),
      );
      const relist = current.status === 'failed' && !current.listing_done;
      const ended = current.status === 'completed_with_failures' || current.status === 'failed';
      if (!ended || (failedItems.length === 0 && !relist)) {
        return { batch: toBatch(current), retried: false, groups: [] };
      }
      const [updated] = rawRows<Row>(
        await tx.query(
          `UPDATE batches
              SET status = $2, dispatch_round = dispatch_round + 1, finished_at = NULL,
                  error_code = NULL, error_message = NULL, error_details = NULL, updated_at = now()
            WHERE id = $1
            RETURNING ${COLUMNS}`,
          [id, relist ? 'queued' : 'running'],
        ),
      );
      const groups = [...new Set(failedItems.map((item) => Number(item.grp)))].sort(
        (a, b) => a - b,
      );
      return { batch: toBatch(updated), retried: true, groups };
    });
  }

  /** Batches whose listing must have a live BullMQ job (queued, or a lease nobody renews). */
  async listingDispatchable(): Promise<{ id: string; priority?: number }[]> {
    const rows = rawRows<{ id: string; options: BatchOptions | null }>(
      await this.db.query(
        `SELECT id, options FROM batches WHERE ${LISTING_DISPATCHABLE} ORDER BY created_at`,
      ),
    );
    return rows.map((row) => ({ id: row.id, priority: row.options?.priority }));
  }

  /** Running batches (their pending groups must each have a live BullMQ job). */
  async running(): Promise<{ id: string; dispatchRound: number; priority?: number }[]> {
    const rows = rawRows<{ id: string; dispatch_round: number; options: BatchOptions | null }>(
      await this.db.query(
        `SELECT id, dispatch_round, options FROM batches WHERE status = 'running' ORDER BY created_at`,
      ),
    );
    return rows.map((row) => ({
      id: row.id,
      dispatchRound: row.dispatch_round,
      priority: row.options?.priority,
    }));
  }
}
