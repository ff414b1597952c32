import { HASHQ_CONFIG, HASHQ_LOGGER, type HashqConfig } from '@hashq/config';
import {
  BATCH_GROUP_QUEUE,
  BATCH_LIST_QUEUE,
  type BatchGroupJobData,
  batchGroupJobId,
  batchGroupJobOptions,
  type BatchListJobData,
  batchListJobOptions,
  PeriodicTask,
  RedisErrorLogger,
  withTimeout,
} from '@hashq/jobs';
import { BullModule, InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, Module, type OnModuleInit } from '@nestjs/common';
import type { Job, Queue } from 'bullmq';
import type { Logger } from 'pino';

import { BatchItemsRepository } from './batch-items.repository';
import { BatchStoreModule } from './batch-store.module';
import { BatchesRepository } from './batches.repository';

/** BullMQ states in which a job will still run (or runs). */
const LIVE_STATES = new Set(['waiting', 'wait', 'delayed', 'prioritized', 'active', 'paused']);
const REDIS_TIMEOUT_MS = 2000;

/**
 * Puts batch work on the BullMQ queues: a listing job per batch, a group job per page of pending
 * small items. Every id is derived from PostgreSQL (the batch id; batch, dispatch round and group),
 * so adding the same work twice is a no-op and the reconciler can rebuild everything from the
 * database.
 */
@Injectable()
export class BatchDispatcher implements OnModuleInit {
  constructor(
    @InjectQueue(BATCH_LIST_QUEUE) readonly lists: Queue<BatchListJobData>,
    @InjectQueue(BATCH_GROUP_QUEUE) readonly groups: Queue<BatchGroupJobData>,
    @Inject(HASHQ_LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    const errors = new RedisErrorLogger(this.logger);
    errors.watch(this.lists);
    errors.watch(this.groups);
  }

  async list(batchId: string, priority?: number): Promise<void> {
    await withTimeout(
      this.lists.add('list', { batchId }, batchListJobOptions(batchId, priority)),
      REDIS_TIMEOUT_MS,
      'redis',
    );
  }

  async group(batchId: string, round: number, group: number, priority?: number): Promise<void> {
    await withTimeout(
      this.groups.add(
        'group',
        { batchId, group },
        batchGroupJobOptions(batchId, round, group, priority),
      ),
      REDIS_TIMEOUT_MS,
      'redis',
    );
  }

  /** Like list()/group(), but a Redis failure is only logged: the reconciler dispatches later. */
  async quietly(work: () => Promise<void>, fields: Record<string, unknown>): Promise<void> {
    try {
      await work();
    } catch (err) {
      this.logger.warn(
        { ...fields, err: (err as Error).message },
        'enqueue failed; the batch work stays in PostgreSQL for the reconciler',
      );
    }
  }

  /**
   * Whether `id` has a live BullMQ job; a finished or orphaned one is removed (the reconciler adds
   * it afresh, else add() would be a no-op).
   */
  async isLive(queue: Queue, id: string): Promise<boolean> {
    const job: Job | undefined = await withTimeout(queue.getJob(id), REDIS_TIMEOUT_MS, 'redis');
    if (!job) return false;
    const state = await withTimeout(job.getState(), REDIS_TIMEOUT_MS, 'redis');
    if (LIVE_STATES.has(state)) return true;
    await withTimeout(job.remove(), REDIS_TIMEOUT_MS, 'redis');
    return false;
  }
}

/**
 * The batches' sibling of JobQueueReconciler (the jobs of big items are ordinary jobs: that one
 * covers them). At start and every RECONCILE_SECONDS: every listing PostgreSQL says is queued or
 * has a dead lease, and every group with pending items, gets its BullMQ job back if Redis lost it
 * (flushed, restarted, an enqueue that never arrived); a batch whose last item ended without
 * ending it is ended.
 */
@Injectable()
export class BatchQueueReconciler extends PeriodicTask {
  constructor(
    private readonly batches: BatchesRepository,
    private readonly items: BatchItemsRepository,
    private readonly dispatch: BatchDispatcher,
    @Inject(HASHQ_CONFIG) private readonly config: HashqConfig,
    @Inject(HASHQ_LOGGER) logger: Logger,
  ) {
    super(logger.child({ component: 'batch-reconciler' }));
  }

  protected periodMs(): number {
    return this.config.reconcileSeconds * 1000;
  }

  protected failure() {
    return { message: 'batch reconciliation failed; retrying later' };
  }

  override async onApplicationBootstrap(): Promise<void> {
    // The first round must not hold up the start (Redis may be away): it runs in the background.
    void this.round();
    await super.onApplicationBootstrap();
  }

  /** One round; returns how many listings and groups it put back. */
  async reconcile(): Promise<number> {
    let restored = 0;
    for (const batch of await this.batches.listingDispatchable()) {
      if (await this.dispatch.isLive(this.dispatch.lists, batch.id)) continue;
      await this.dispatch.list(batch.id, batch.priority);
      restored++;
    }
    for (const batch of await this.batches.running()) {
      for (const group of await this.items.pendingGroups(batch.id)) {
        const id = batchGroupJobId(batch.id, batch.dispatchRound, group);
        if (await this.dispatch.isLive(this.dispatch.groups, id)) continue;
        await this.dispatch.group(batch.id, batch.dispatchRound, group, batch.priority);
        restored++;
      }
      await this.batches.tryFinish(batch.id);
    }
    if (restored > 0) this.logger.warn({ restored }, 're-enqueued batch work missing from Redis');
    return restored;
  }

  protected async run(): Promise<void> {
    await this.reconcile();
  }
}

/** The batch queues (producers on the app's BullModule connection) and their dispatcher. */
@Module({
  imports: [
    BatchStoreModule,
    BullModule.registerQueue({ name: BATCH_LIST_QUEUE }, { name: BATCH_GROUP_QUEUE }),
  ],
  providers: [BatchDispatcher],
  exports: [BatchDispatcher, BatchStoreModule, BullModule],
})
export class BatchQueuesModule {}

/** The batch reconciler of an app (the API and every worker run one). */
@Module({
  imports: [BatchQueuesModule],
  providers: [BatchQueueReconciler],
  exports: [BatchQueueReconciler],
})
export class BatchReconcilerModule {}
