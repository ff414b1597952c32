import { HASHQ_CONFIG, HASHQ_LOGGER, type HashqConfig } from '@hashq/config';
import { type JobEntity, StatementBatcher } from '@hashq/database';
import {
  HASH_GROUP_JOB,
  HASH_QUEUE,
  type HashGroupJobData,
  hashGroupJobOptions,
  type HashJobData,
  hashJobData,
  hashJobOptions,
  isGroupable,
  JobAdmission,
  JobsRepository,
  MAX_GROUP_JOBS,
  withTimeout,
} from '@hashq/jobs';
import { InjectQueue } from '@nestjs/bullmq';
import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import type { Queue } from 'bullmq';
import type { Logger } from 'pino';

import { ApiError } from '../common/api-error';
import { checkIdempotencyKey, idempotencyRequestHash } from '../common/idempotency';
import { decodeCursor, encodeCursor, isUuid } from './cursor';
import type { CreateJobDto } from './dto/create-job.dto';
import type { JobListResponse, JobResponse } from './dto/job.response';
import { DEFAULT_PAGE_SIZE, type ListJobsQuery } from './dto/list-jobs.query';
import { toJobResponse } from './job.view';
import { JobRequestValidator } from './job-request.validator';
import { JobSourceResolver } from './job-source.resolver';
import { TenantPolicy, tenantQueueFull } from './tenant-policy';

/** How long a submit waits for Redis before answering anyway (the reconciler enqueues later). */
const ENQUEUE_TIMEOUT_MS = 2000;

export interface SubmitResult {
  job: JobResponse;
  /** true when an Idempotency-Key matched an earlier identical request */
  replayed: boolean;
}

@Injectable()
export class JobsService {
  /**
   * Jobs of concurrent requests go to BullMQ together: one addBulk (one round trip) per group.
   * Their small file jobs go as job groups (HASH_GROUP_JOB, one per priority): the worker hashes
   * each group's files in one native call and ends them in one statement. A lone entry, the usual
   * case, goes by add(): addBulk's pipeline costs the API about twice the CPU for one entry.
   */
  private readonly adds = new StatementBatcher<JobEntity, void>(
    async (jobs) => {
      const entries = this.bulkEntries(jobs);
      if (entries.length === 1)
        await this.queue.add(entries[0].name, entries[0].data, entries[0].opts);
      else await this.queue.addBulk(entries);
      return jobs.map(() => undefined);
    },
    (job) => job.id,
    2,
    256,
  );

  constructor(
    private readonly jobs: JobsRepository,
    private readonly validator: JobRequestValidator,
    private readonly sources: JobSourceResolver,
    private readonly tenantPolicy: TenantPolicy,
    private readonly admission: JobAdmission,
    @InjectQueue(HASH_QUEUE) private readonly queue: Queue<HashJobData | HashGroupJobData>,
    @Inject(HASHQ_CONFIG) private readonly config: HashqConfig,
    @Inject(HASHQ_LOGGER) private readonly logger: Logger,
  ) {}

  /** Records the job in PostgreSQL (the truth), then dispatches it through BullMQ. */
  async submit(
    tenantId: string,
    dto: CreateJobDto,
    idempotencyKey?: string,
  ): Promise<SubmitResult> {
    checkIdempotencyKey(idempotencyKey);
    const checked = this.validator.check(dto);
    const source = await this.sources.resolve(dto.source);
    await this.tenantPolicy.checkSource(tenantId, source.ref);
    const requestHash = idempotencyRequestHash(idempotencyKey, dto);

    const result = await this.jobs
      .insert({
        tenantId,
        source: source.ref,
        algorithms: checked.algorithms,
        options: checked.options,
        totalBytes: source.size,
        idempotencyKey,
        requestHash,
      })
      .catch(tenantQueueFull(tenantId));
    if (result.kind === 'existing' && !result.sameRequest) {
      throw new ApiError(
        HttpStatus.CONFLICT,
        'IDEMPOTENCY_KEY_REUSED',
        'this Idempotency-Key was used with a different request body',
        { jobId: result.job.id },
      );
    }
    // Dispatched again on a replay too: the BullMQ id is the job id, so this is a no-op unless the
    // first attempt never reached Redis.
    if (result.job.status === 'queued') await this.dispatch(result.job);
    return { job: toJobResponse(result.job), replayed: result.kind === 'existing' };
  }

  /** Another tenant's job is JOB_NOT_FOUND, exactly like a missing one. */
  async get(tenantId: string, id: string): Promise<JobResponse> {
    return toJobResponse(await this.findOrFail(tenantId, id));
  }

  async list(tenantId: string, query: ListJobsQuery): Promise<JobListResponse> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const rows = await this.jobs.list({ tenantId, status: query.status, limit: limit + 1, after });
    const page = rows.slice(0, limit);
    return {
      items: page.map(toJobResponse),
      nextCursor: rows.length > limit ? encodeCursor(page[page.length - 1].id) : null,
    };
  }

  /** Returns the job and whether it is already canceled (true) or only asked to stop (false). */
  async cancel(tenantId: string, id: string): Promise<{ job: JobResponse; canceled: boolean }> {
    if (!isUuid(id)) throw this.notFound(id);
    const result = await this.jobs.requestCancel(id, tenantId);
    switch (result.kind) {
      case 'not-found':
        throw this.notFound(id);
      case 'already-finished':
        throw new ApiError(
          HttpStatus.CONFLICT,
          'JOB_FINISHED',
          `job already ${result.job.status}`,
          {
            status: result.job.status,
          },
        );
      case 'canceled':
        await this.removeFromQueue(id);
        if (result.job.admission === 'admitted') await this.admit(result.job.tenantId);
        return { job: toJobResponse(result.job), canceled: true };
      case 'requested':
        return { job: toJobResponse(result.job), canceled: false };
    }
  }

  private async findOrFail(tenantId: string, id: string): Promise<JobEntity> {
    const job = isUuid(id) ? await this.jobs.findById(id) : null;
    if (!job || job.tenantId !== tenantId) throw this.notFound(id);
    return job;
  }

  private notFound(id: string): ApiError {
    return new ApiError(HttpStatus.NOT_FOUND, 'JOB_NOT_FOUND', `no job with id ${id}`, { id });
  }

  /**
   * A job held for a slot of its tenant (max_running_jobs) waits in PostgreSQL: the tenant's free
   * slots are filled, oldest held job first. Any other job goes to BullMQ at once.
   */
  private async dispatch(job: JobEntity): Promise<void> {
    if (job.admission === 'held') await this.admit(job.tenantId);
    else await this.enqueue(job);
  }

  /** A failure does not fail the request: the AdmissionSweeper fills the slots later. */
  private async admit(tenantId: string): Promise<void> {
    try {
      await this.admission.fill(tenantId);
    } catch (err) {
      this.logger.warn({ tenantId, err }, 'admission failed; the sweep admits held jobs later');
    }
  }

  /**
   * A Redis failure does not fail the request: the job is stored, and the queue reconciler enqueues
   * it once Redis is back (adding it twice is harmless: the BullMQ id is the job id).
   */
  private async enqueue(job: JobEntity): Promise<void> {
    try {
      await withTimeout(this.adds.submit(job), ENQUEUE_TIMEOUT_MS, 'redis');
    } catch (err) {
      this.logger.warn(
        { jobId: job.id, err },
        'enqueue failed; the job stays queued in PostgreSQL',
      );
    }
  }

  /**
   * The BullMQ entries of jobs submitted together: their small file jobs in groups (one per
   * priority, MAX_GROUP_JOBS at most), the others, and a group's only job, alone.
   */
  private bulkEntries(jobs: JobEntity[]) {
    const single: JobEntity[] = [];
    const groups = new Map<number | undefined, JobEntity[][]>();
    for (const job of jobs) {
      if (!isGroupable(job, this.config.batches.smallItemBytes)) {
        single.push(job);
        continue;
      }
      const chunks = groups.get(job.options.priority) ?? [];
      const last = chunks[chunks.length - 1];
      if (last && last.length < MAX_GROUP_JOBS) last.push(job);
      else chunks.push([job]);
      groups.set(job.options.priority, chunks);
    }
    const entries = [];
    for (const [priority, chunks] of groups) {
      for (const chunk of chunks) {
        if (chunk.length === 1) {
          single.push(chunk[0]);
          continue;
        }
        const jobIds = chunk.map((job) => job.id);
        entries.push({
          name: HASH_GROUP_JOB,
          data: { jobIds },
          opts: hashGroupJobOptions(jobIds, priority),
        });
      }
    }
    for (const job of single) {
      entries.push({
        name: 'hash',
        data: hashJobData(job.id, job.totalBytes),
        opts: hashJobOptions(job.id, job.options.priority),
      });
    }
    return entries;
  }

  /** A canceled job that is still waiting in BullMQ is taken out (an active one is skipped by the worker). */
  private async removeFromQueue(id: string): Promise<void> {
    try {
      await this.queue.remove(id);
    } catch (err) {
      this.logger.debug({ jobId: id, err }, 'canceled job not removed from the queue');
    }
  }
}
