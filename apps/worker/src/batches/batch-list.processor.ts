import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

import { BatchDispatcher } from '@hashq/batches/batch-dispatch';
import { encodeItems, type NewBatchItem } from '@hashq/batches/batch-items.repository';
import {
  BatchesRepository,
  type LeasedBatch,
  type ListedPage,
} from '@hashq/batches/batches.repository';
import type { ListedItem, Lister, ListPage } from '@hashq/batches/listing/types';
import { HASHQ_CONFIG, HASHQ_LOGGER, type HashqConfig, loadConfig } from '@hashq/config';
import { BATCH_LIST_QUEUE, type BatchListJobData } from '@hashq/jobs';
import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { type BeforeApplicationShutdown, Inject } from '@nestjs/common';
import { type Job, UnrecoverableError, WaitingError } from 'bullmq';
import type { Logger } from 'pino';

import { classifyError } from '../job-errors';
import { moveBackToWait } from '../move-back-to-wait';
import { BatchListers } from './batch-listers';

function workerOptions() {
  const { worker: settings } = loadConfig();
  return {
    concurrency: 1,
    lockDuration: settings.lockDurationMs,
    stalledInterval: settings.stalledIntervalMs,
    maxStalledCount: settings.maxStalledCount,
  };
}

/** Codes of listing faults no retry can cure besides the sources' permanent ones. */
const PERMANENT_LISTING_CODES = new Set(['MANIFEST_UNREADABLE', 'MANIFEST_TOO_LARGE']);

/**
 * The listing step of a batch: pages of the source's listing, each committed with its cursor in one
 * fenced transaction (batches.repository commitPage), then its small items dispatched as one
 * hashing group. A crashed listing is delivered again (BullMQ's stall detection, or the
 * reconciler) and goes on from the committed cursor: nothing is listed twice, and only one page
 * is ever in memory.
 */
@Processor(BATCH_LIST_QUEUE, workerOptions())
export class BatchListProcessor extends WorkerHost implements BeforeApplicationShutdown {
  private readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private draining = false;

  constructor(
    private readonly batches: BatchesRepository,
    private readonly listers: BatchListers,
    private readonly dispatch: BatchDispatcher,
    @Inject(HASHQ_CONFIG) private readonly config: HashqConfig,
    @Inject(HASHQ_LOGGER) private readonly log: Logger,
  ) {
    super();
  }

  async process(job: Job<BatchListJobData>, token?: string): Promise<{ status: string }> {
    const batchId = job.data.batchId;
    if (this.draining) return moveBackToWait(job, token);
    const batch = await this.batches.leaseListing(batchId, this.owner, this.config.leaseSeconds);
    if (!batch) {
      this.log.info({ batchId }, 'batch listing is not due: nothing to do');
      return { status: 'skipped' };
    }
    const log = this.log.child({ batchId, fence: batch.fence, attempt: job.attemptsMade + 1 });
    log.info({ cursor: batch.listCursor, listed: batch.listedItems }, 'batch listing started');
    try {
      return await this.list(batch, log, job, token);
    } catch (err) {
      if (err instanceof WaitingError) throw err;
      throw await this.settleError(err, job, batch, log);
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.draining = true;
    await this.worker.close();
  }

  @OnWorkerEvent('error')
  onError(err: Error): void {
    this.log.error({ err: err.message }, 'batch list worker error');
  }

  private async list(
    batch: LeasedBatch,
    log: Logger,
    job: Job,
    token: string | undefined,
  ): Promise<{ status: string }> {
    const lister: Lister & { close?(): Promise<void> } = await this.listers.create(batch);
    try {
      return await this.listPages(batch, lister, log, job, token);
    } finally {
      await lister.close?.();
    }
  }

  private async listPages(
    batch: LeasedBatch,
    lister: Lister,
    log: Logger,
    job: Job,
    token: string | undefined,
  ): Promise<{ status: string }> {
    let cursor = batch.listCursor;
    let listed = batch.listedItems;
    for (;;) {
      if (this.draining) return moveBackToWait(job, token);
      const step = await this.listPage(batch, lister, cursor, listed, log);
      if ('status' in step) return step;
      ({ cursor, listed } = step);
      if (cursor === null) {
        log.info(
          { listed, smallItemBytes: this.config.batches.smallItemBytes },
          'batch listing finished',
        );
        return { status: 'listed' };
      }
    }
  }

  /**
   * One page listed, committed and dispatched. Its own frame: what an async function holds is kept
   * across its awaits, so the page's items, garbage once encoded, would otherwise live (and be
   * promoted) through the commit, the dispatch and the next page's listing.
   */
  private async listPage(
    batch: LeasedBatch,
    lister: Lister,
    cursor: string | null,
    listed: number,
    log: Logger,
  ): Promise<{ status: string } | { cursor: string | null; listed: number }> {
    const { maxItems } = this.config.batches;
    const page = encodePage(await lister.page(cursor, this.config.batches.groupSize));
    if (listed + page.count > maxItems) {
      await this.batches.failListing(batch, {
        code: 'BATCH_TOO_LARGE',
        message: `the source lists more than BATCH_MAX_ITEMS (${maxItems}) objects`,
        details: { maxItems },
      });
      log.error({ maxItems }, 'batch failed: BATCH_TOO_LARGE');
      return { status: 'failed' };
    }
    const { committed, firstSeq } = await this.batches.commitPage(
      batch,
      page,
      this.config.leaseSeconds,
    );
    if (!committed) {
      log.warn('batch listing lost its lease or the batch ended: stopping without writing');
      return { status: 'lease-lost' };
    }
    if (page.hashable) {
      await this.dispatch.quietly(
        () => this.dispatch.group(batch.id, batch.dispatchRound, firstSeq, batch.options.priority),
        { batchId: batch.id, group: firstSeq },
      );
    }
    return { cursor: page.cursor, listed: listed + page.count };
  }

  /** A fault of the source itself fails the batch; a transient one is retried by BullMQ. */
  private async settleError(
    err: unknown,
    job: Job,
    batch: LeasedBatch,
    log: Logger,
  ): Promise<Error> {
    const error = classifyError(err);
    const code = (err as { code?: unknown }).code;
    const permanent =
      error.permanent || (typeof code === 'string' && PERMANENT_LISTING_CODES.has(code));
    const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    if (permanent || lastAttempt) {
      const failure = {
        code: typeof code === 'string' && error.code === 'INTERNAL_ERROR' ? code : error.code,
        message: error.message,
        details: error.details,
      };
      await this.batches.failListing(batch, failure);
      log.error({ code: failure.code, error: failure.message }, 'batch failed');
      return new UnrecoverableError(`${failure.code}: ${failure.message}`);
    }
    log.warn(
      { code: error.code, error: error.message },
      'batch listing: transient error, retrying',
    );
    return err instanceof Error ? err : new Error(String(err));
  }
}

/** A listed page as commitPage takes it, and whether any of its items is to be hashed. */
function encodePage(page: ListPage): ListedPage & { hashable: boolean } {
  const items = page.items.map(toNewItem);
  return {
    items: encodeItems(items),
    count: items.length,
    cursor: page.cursor,
    bytes: items.reduce((sum, item) => sum + (item.size ?? 0), 0),
    hashable: items.some((item) => !item.error),
  };
}

/** A listed item as a row: an S3 item is pinned to the ETag (and version) of the listing. */
function toNewItem(item: ListedItem): NewBatchItem {
  // The fields S3Source compares (etag, size; the version id when both sides know one).
  const version =
    item.etag === undefined
      ? undefined
      : {
          etag: item.etag,
          size: item.size ?? null,
          ...(item.source.type === 's3' && item.source.versionId
            ? { versionId: item.source.versionId }
            : {}),
        };
  return {
    name: item.name,
    source: item.source,
    size: item.size,
    version,
    expected: item.expected,
    line: item.line,
    error: item.error,
  };
}
