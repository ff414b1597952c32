import { lstat } from 'node:fs/promises';

import {
  BatchItemsRepository,
  encodeResults,
  type ItemResult,
  type PendingItem,
} from '@hashq/batches/batch-items.repository';
import { BatchesRepository, type BatchRow } from '@hashq/batches/batches.repository';
import { HASHQ_CONFIG, HASHQ_LOGGER, type HashqConfig, loadConfig } from '@hashq/config';
import {
  BATCH_GROUP_QUEUE,
  type BatchGroupJobData,
  HASH_QUEUE,
  type HashJobData,
  hashJobData,
  hashJobOptions,
  JobsRepository,
  realRoots,
  remoteRefusal,
  type Tenant,
  tenantFileRoots,
  TenantsRepository,
} from '@hashq/jobs';
import { isWithin, SourceFactory } from '@hashq/sources';
import { InjectQueue, OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject } from '@nestjs/common';
import type { Job, Queue } from 'bullmq';
import type { Logger } from 'pino';

import { hashGroup } from './hash-group';

function workerOptions() {
  const { worker: settings, batches } = loadConfig();
  return {
    concurrency: batches.groupConcurrency,
    lockDuration: settings.lockDurationMs,
    stalledInterval: settings.stalledIntervalMs,
    maxStalledCount: settings.maxStalledCount,
  };
}

/**
 * The hashing step of a batch: one BullMQ job per group (a listing page). Its small pending items
 * are hashed at once (hashGroup) and their results written in one statement; a big item (or one of
 * unknown size) becomes an ordinary durable job, with checkpoints and resume, linked to its item.
 * Running a group twice is harmless: only pending items take a result, and a big item's job is
 * made under an idempotency key of its own.
 */
@Processor(BATCH_GROUP_QUEUE, workerOptions())
export class BatchGroupProcessor extends WorkerHost {
  constructor(
    private readonly batches: BatchesRepository,
    private readonly items: BatchItemsRepository,
    private readonly jobs: JobsRepository,
    private readonly sources: SourceFactory,
    private readonly tenants: TenantsRepository,
    @InjectQueue(HASH_QUEUE) private readonly hashQueue: Queue<HashJobData>,
    @Inject(HASHQ_CONFIG) private readonly config: HashqConfig,
    @Inject(HASHQ_LOGGER) private readonly log: Logger,
  ) {
    super();
  }

  async process(job: Job<BatchGroupJobData>): Promise<{ status: string; hashed?: number }> {
    const { batchId, group } = job.data;
    const batch = await this.batches.find(batchId);
    if (!batch || batch.status !== 'running') return { status: 'skipped' };
    const log = this.log.child({ batchId, group, attempt: job.attemptsMade + 1 });
    const { rows, ...counts } = await this.hashPending(batch, group, job);
    const written = rows ? await this.items.writeResults(batchId, rows) : 0;
    log.debug({ ...counts, written }, 'batch group done');
    return { status: 'done', hashed: written };
  }

  /**
   * The group's pending items: refused, hashed, or made jobs; returns the results to write, encoded
   * (null: none). Its own frame: an async function keeps what it holds across its awaits, so the
   * rows and results, garbage once encoded, would otherwise live (and be promoted) through the
   * results' transaction.
   */
  private async hashPending(
    batch: BatchRow,
    group: number,
    job: Job<BatchGroupJobData>,
  ): Promise<{ rows: Buffer | null; hashed: number; refused: number; jobs: number }> {
    const tenant = await this.tenants.settings(batch.tenantId);
    if (!tenant) throw new Error(`unknown tenant ${batch.tenantId}`);
    const fileRoots = realRoots(tenantFileRoots(tenant.fileRoots, this.config.fileRoots));
    const refused: ItemResult[] = [];
    const allowed: PendingItem[] = [];
    for (const item of await this.items.pendingOfGroup(batch.id, group)) {
      const refusedItem = refusal(item, tenant, fileRoots);
      if (refusedItem) refused.push(refusedItem);
      else allowed.push(item);
    }
    const pending = await withLocalSizes(allowed);
    const small = pending.filter((item) => this.isSmall(item, batch));
    const big = pending.filter((item) => !this.isSmall(item, batch));
    for (const item of big) await this.startJob(batch, item);
    const { results, promoted } = await hashGroup(small, {
      algorithms: algorithmsFor(batch, small),
      outputLength: batch.options.outputLength,
      fileRoots,
      sources: this.sources,
      remoteParallel: 8,
      lastAttempt: job.attemptsMade + 1 >= (job.opts.attempts ?? 1),
      promoteBytes: this.config.batches.smallItemBytes,
    });
    for (const { item, size } of promoted) await this.startJob(batch, { ...item, size });
    const all = refused.length > 0 ? [...refused, ...results] : results;
    return {
      rows: all.length > 0 ? encodeResults(all) : null,
      hashed: results.length,
      refused: refused.length,
      jobs: big.length + promoted.length,
    };
  }

  @OnWorkerEvent('error')
  onError(err: Error): void {
    this.log.error({ err: err.message }, 'batch group worker error');
  }

  /**
   * Hashed in the group: a size known below BATCH_SMALL_ITEM_BYTES, or a remote item listed
   * without one (a manifest's URL or s3:// line), which hashGroup promotes to a job once its
   * response shows it is big: a million small URLs cost a thousand group jobs, not a million jobs.
   * verify "s3" needs the jobs' S3 checksum machinery: every item of such a batch runs as a job.
   */
  private isSmall(item: PendingItem, batch: BatchRow): boolean {
    const threshold = this.config.batches.smallItemBytes;
    if (batch.options.verify === 's3') return false;
    return item.size === null ? threshold > 0 : item.size < threshold;
  }

  /** The item as an ordinary job (made once per dispatch round: the idempotency key says which). */
  private async startJob(batch: BatchRow, item: PendingItem): Promise<void> {
    const result = await this.jobs.insert({
      tenantId: batch.tenantId,
      source: item.source,
      algorithms: algorithmsFor(batch, [item]),
      options: {
        ...(batch.options.outputLength ? { outputLength: batch.options.outputLength } : {}),
        ...(batch.options.priority ? { priority: batch.options.priority } : {}),
        ...(item.expected ? { expected: item.expected } : {}),
        ...(batch.options.verify === 's3' ? { s3Checksum: true } : {}),
      },
      totalBytes: item.size,
      idempotencyKey: `batch:${batch.id}:${batch.dispatchRound}:${item.seq}`,
    });
    await this.items.linkJob(batch.id, item.seq, result.job.id);
    // A job held for a slot of its tenant (max_running_jobs) is admitted by the API's sweeper.
    if (result.job.status === 'queued' && result.job.admission !== 'held') {
      await this.hashQueue.add(
        'hash',
        hashJobData(result.job.id, result.job.totalBytes),
        hashJobOptions(result.job.id, batch.options.priority),
      );
    }
  }
}

/**
 * Local items listed without a size (a SUM file, a manifest of paths) get it from lstat, so that
 * small ones are hashed in the group; a link counts as small (the group opens it beneath its root,
 * whatever it names) and so does a missing file (the group records SOURCE_NOT_FOUND).
 */
async function withLocalSizes(items: PendingItem[]): Promise<PendingItem[]> {
  if (items.every((item) => item.size !== null || item.source.type !== 'file')) return items;
  return Promise.all(
    items.map(async (item) => {
      if (item.size !== null || item.source.type !== 'file') return item;
      const size = await lstat(item.source.path).then(
        (stats) => stats.size,
        () => 0,
      );
      return { ...item, size };
    }),
  );
}

/** The batch's algorithms and those the items' expected digests name (a SUM file's BSD tags). */
function algorithmsFor(batch: BatchRow, items: readonly PendingItem[]): string[] {
  const names = new Set(batch.algorithms);
  for (const item of items) if (item.expected) for (const name in item.expected) names.add(name);
  return [...names];
}

/**
 * An item the batch's tenant may not read (docs/tenants.md), e.g. a line of a referenced manifest:
 * a file outside its roots (the listed path is a real path) is PATH_OUTSIDE_ROOTS, a host or
 * bucket it is not allowed SOURCE_NOT_ALLOWED. The item fails; the others go on.
 */
function refusal(
  item: PendingItem,
  tenant: Tenant,
  fileRoots: readonly string[],
): ItemResult | null {
  const source = item.source;
  if (source.type === 'file') {
    if (fileRoots.some((root) => isWithin(root, source.path))) return null;
    return failed(item, 'PATH_OUTSIDE_ROOTS', 'file is outside the allowed roots');
  }
  const refused = remoteRefusal(tenant, source);
  return refused ? failed(item, refused.code, refused.message) : null;
}

function failed(item: PendingItem, code: string, message: string): ItemResult {
  return { seq: item.seq, status: 'failed', errorCode: code, errorMessage: message };
}
