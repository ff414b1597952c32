import { BatchDispatcher } from '@hashq/batches/batch-dispatch';
import { BatchItemsRepository } from '@hashq/batches/batch-items.repository';
import { BatchesRepository, type BatchRow } from '@hashq/batches/batches.repository';
import { HASHQ_CONFIG, HASHQ_LOGGER, type HashqConfig } from '@hashq/config';
import { HASH_QUEUE, type HashJobData, JobsRepository, withTimeout } from '@hashq/jobs';
import { InjectQueue } from '@nestjs/bullmq';
import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import type { Queue } from 'bullmq';
import type { Logger } from 'pino';

import { ApiError } from '../common/api-error';
import { checkIdempotencyKey, idempotencyRequestHash } from '../common/idempotency';
import { decodeCursor, encodeCursor, isUuid } from '../jobs/cursor';
import { JobRequestValidator } from '../jobs/job-request.validator';
import {
  type BatchItemListResponse,
  type BatchListResponse,
  type BatchResponse,
  toBatchResponse,
  toBatchSummary,
  toItemResponse,
} from './batch.view';
import { BatchSourceResolver } from './batch-source.resolver';
import { BatchTenantPolicy } from './batch-tenant-policy';
import {
  DEFAULT_ITEMS_PAGE_SIZE,
  DEFAULT_PAGE_SIZE,
  type ListBatchesQuery,
  type ListItemsQuery,
} from './dto/batch-queries';
import type { CreateBatchDto } from './dto/create-batch.dto';

export interface SubmittedBatch {
  batch: BatchResponse;
  replayed: boolean;
}

/**
 * The batch resource: PostgreSQL first (the batch row), then the listing job on BullMQ (the
 * reconciler dispatches it later if Redis is away). Another tenant's batch is answered as missing.
 */
@Injectable()
export class BatchesService {
  constructor(
    private readonly batches: BatchesRepository,
    private readonly items: BatchItemsRepository,
    private readonly jobs: JobsRepository,
    private readonly dispatch: BatchDispatcher,
    private readonly validator: JobRequestValidator,
    private readonly sources: BatchSourceResolver,
    private readonly tenantPolicy: BatchTenantPolicy,
    @InjectQueue(HASH_QUEUE) private readonly hashQueue: Queue<HashJobData>,
    @Inject(HASHQ_CONFIG) private readonly config: HashqConfig,
    @Inject(HASHQ_LOGGER) private readonly logger: Logger,
  ) {}

  async submit(
    dto: CreateBatchDto,
    tenantId: string,
    idempotencyKey?: string,
  ): Promise<SubmittedBatch> {
    checkIdempotencyKey(idempotencyKey);
    const checked = this.validator.check({
      source: null,
      algorithms: dto.algorithms,
      outputLength: dto.outputLength,
      priority: dto.priority,
    });
    const { source, manifest } = await this.sources.resolve(dto.source, dto.verify, {
      algorithms: checked.algorithms,
      outputLength: checked.options.outputLength,
    });
    await this.tenantPolicy.check(tenantId, source, manifest, {
      algorithms: checked.algorithms,
      outputLength: checked.options.outputLength,
    });
    const active = await this.batches.countActive();
    if (active >= this.config.batches.maxActive) {
      throw new ApiError(
        HttpStatus.TOO_MANY_REQUESTS,
        'BATCH_LIMIT_REACHED',
        `${active} batches are queued or running (BATCH_MAX_ACTIVE ${this.config.batches.maxActive})`,
        { active, maxActive: this.config.batches.maxActive },
      );
    }
    const result = await this.batches.insert({
      tenantId,
      source,
      manifest,
      algorithms: checked.algorithms,
      options: {
        ...(checked.options.outputLength ? { outputLength: checked.options.outputLength } : {}),
        ...(checked.options.priority ? { priority: checked.options.priority } : {}),
        ...(dto.verify ? { verify: dto.verify } : {}),
      },
      idempotencyKey,
      requestHash: idempotencyRequestHash(idempotencyKey, dto),
    });
    if (result.kind === 'existing' && !result.sameRequest) {
      throw new ApiError(
        HttpStatus.CONFLICT,
        'IDEMPOTENCY_KEY_REUSED',
        'this Idempotency-Key was used with a different request body',
        { batchId: result.batch.id },
      );
    }
    if (result.batch.status === 'queued') await this.dispatchListing(result.batch);
    return { batch: await this.view(result.batch), replayed: result.kind === 'existing' };
  }

  async get(id: string, tenantId: string): Promise<BatchResponse> {
    return this.view(await this.findOrFail(id, tenantId));
  }

  async list(query: ListBatchesQuery, tenantId: string): Promise<BatchListResponse> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const rows = await this.batches.list({
      tenantId,
      status: query.status,
      limit: limit + 1,
      after,
    });
    const page = rows.slice(0, limit);
    return {
      items: page.map(toBatchSummary),
      nextCursor: rows.length > limit ? encodeCursor(page[page.length - 1].id) : null,
    };
  }

  async listItems(
    id: string,
    tenantId: string,
    query: ListItemsQuery,
  ): Promise<BatchItemListResponse> {
    const batch = await this.findOrFail(id, tenantId);
    const limit = query.limit ?? DEFAULT_ITEMS_PAGE_SIZE;
    const rows = await this.items.page(batch.id, {
      statuses: query.status ? [query.status] : undefined,
      afterSeq: query.cursor === undefined ? undefined : decodeSeqCursor(query.cursor),
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    return {
      items: page.map(toItemResponse),
      nextCursor: rows.length > limit ? encodeSeqCursor(page[page.length - 1].seq) : null,
    };
  }

  /** Cancels a queued or running batch: pending items at once, running big items within a chunk. */
  async cancel(id: string, tenantId: string): Promise<BatchResponse> {
    const result = isUuid(id) ? await this.batches.cancel(id, tenantId) : null;
    if (!result) throw this.notFound(id);
    if (!result.canceled) {
      if (result.batch.status === 'canceled') return this.view(result.batch);
      throw new ApiError(
        HttpStatus.CONFLICT,
        'BATCH_FINISHED',
        `batch already ${result.batch.status}`,
        { status: result.batch.status },
      );
    }
    for (const jobId of result.jobIds) {
      const canceled = await this.jobs.requestCancel(jobId, tenantId);
      if (canceled.kind === 'canceled') await this.removeQueued(jobId);
    }
    return this.view(result.batch);
  }

  /** Runs the failed items of an ended batch again (or its listing, when that failed). */
  async retry(id: string, tenantId: string): Promise<BatchResponse> {
    const result = isUuid(id) ? await this.batches.retry(id, tenantId) : null;
    if (!result) throw this.notFound(id);
    if (!result.retried) {
      throw new ApiError(
        HttpStatus.CONFLICT,
        'BATCH_NOT_RETRYABLE',
        result.batch.status === 'queued' || result.batch.status === 'running'
          ? 'the batch is still running'
          : 'the batch has no failed item to run again',
        { status: result.batch.status },
      );
    }
    const batch = result.batch;
    if (batch.status === 'queued') await this.dispatchListing(batch);
    for (const group of result.groups) {
      await this.dispatch.quietly(
        () => this.dispatch.group(batch.id, batch.dispatchRound, group, batch.options.priority),
        { batchId: batch.id, group },
      );
    }
    return this.view(batch);
  }

  async findOrFail(id: string, tenantId: string): Promise<BatchRow> {
    const batch = isUuid(id) ? await this.batches.find(id, tenantId) : null;
    if (!batch) throw this.notFound(id);
    return batch;
  }

  private async view(batch: BatchRow): Promise<BatchResponse> {
    return toBatchResponse(batch, await this.items.counts(batch.id));
  }

  private dispatchListing(batch: BatchRow): Promise<void> {
    return this.dispatch.quietly(() => this.dispatch.list(batch.id, batch.options.priority), {
      batchId: batch.id,
    });
  }

  private async removeQueued(jobId: string): Promise<void> {
    try {
      await withTimeout(this.hashQueue.remove(jobId), 2000, 'redis');
    } catch (err) {
      this.logger.debug({ jobId, err }, 'canceled job not removed from the queue');
    }
  }

  private notFound(id: string): ApiError {
    return new ApiError(HttpStatus.NOT_FOUND, 'BATCH_NOT_FOUND', `no batch with id ${id}`, { id });
  }
}

/** Item pages: the opaque cursor is the listing number of the last item of the page. */
export function encodeSeqCursor(seq: number): string {
  return Buffer.from(`s${seq}`, 'utf8').toString('base64url');
}

export function decodeSeqCursor(cursor: string): number {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const seq = /^s([0-9]{1,15})$/.exec(text)?.[1];
  if (seq === undefined) {
    throw ApiError.validation('cursor is not a cursor returned by this API', [
      { field: 'cursor', problems: ['invalid cursor'] },
    ]);
  }
  return Number(seq);
}
