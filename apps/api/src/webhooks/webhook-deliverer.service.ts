import { HASHQ_CONFIG, HASHQ_LOGGER, type HashqConfig } from '@hashq/config';
import { SealedStateError, StateSealer, webhookSecretBinding } from '@hashq/crypto';
import { METRIC_NAMES, PeriodicTask } from '@hashq/jobs';
import { NetGuard } from '@hashq/sources';
import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { Gauge } from 'prom-client';

import { BatchesService } from '../batches/batches.service';
import { ApiError } from '../common/api-error';
import { toSessionResponse } from '../digest-sessions/digest-session.response';
import {
  type DigestSessionRow,
  DigestSessionsRepository,
} from '../digest-sessions/digest-sessions.repository';
import { DigestSessionsService } from '../digest-sessions/digest-sessions.service';
import { JobsService } from '../jobs/jobs.service';
import { MetricsService } from '../metrics/metrics.service';
import { postWebhook } from './webhook-sender';
import { signWebhook } from './webhook-signature';
import { type ClaimedDelivery, type WebhookEvent, WebhooksRepository } from './webhooks.repository';

/** Deliveries one instance has in flight at most. */
const IN_FLIGHT = 16;
/** Ended deliveries are kept this many days (GET …/deliveries shows them), then deleted. */
export const DELIVERY_RETENTION_DAYS = 7;
const PRUNE_EVERY_MS = 60_000;

/** A message's body: the event, when the resource ended (the delivery was queued), the resource. */
function webhookBody(type: WebhookEvent, endedAt: Date, data: object): string {
  return JSON.stringify({ type, timestamp: endedAt.toISOString(), data });
}

/**
 * Sends the webhook deliveries the webhook_event trigger queued, every WEBHOOK_POLL_MS, on every
 * API instance (a delivery is claimed by one; SKIP LOCKED). At least once: a delivery whose sender
 * died is sent again when its claim runs out. The body is made at the first attempt from the
 * resource as GET shows it (`data`; a session deleted or expired before that: just before), kept,
 * and sent unchanged by every retry, each signed anew (Standard Webhooks: `webhook-id` stays,
 * `webhook-timestamp` is the time of sending).
 */
@Injectable()
export class WebhookDeliverer extends PeriodicTask {
  /** A round is claiming deliveries (a round due meanwhile is skipped). */
  private claiming = false;
  private prunedAt = 0;
  /** The attempts under way, each on its own: a slow receiver holds its slot, not the others. */
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly deliveries: WebhooksRepository,
    private readonly sealer: StateSealer,
    private readonly jobs: JobsService,
    private readonly batches: BatchesService,
    private readonly sessions: DigestSessionsRepository,
    private readonly guard: NetGuard,
    @Inject(HASHQ_CONFIG) private readonly config: HashqConfig,
    @Inject(HASHQ_LOGGER) logger: Logger,
    metrics: MetricsService,
    sessionsService: DigestSessionsService,
  ) {
    super(logger);
    sessionsService.beforeDiscard((sessions) => this.keepUnsentBodies(sessions));
    this.registerMetrics(metrics);
  }

  /**
   * Sessions about to be deleted or to lose their digests (expiry) before their session.completed
   * was first sent: the bodies are made from the rows now, while they are whole (an attempt that
   * then finds a session gone or expired sends the kept body).
   */
  private async keepUnsentBodies(sessions: DigestSessionRow[]): Promise<void> {
    // an upload not ended has no session.completed queued
    const ended = new Map(
      sessions
        .filter((session) => session.status !== 'uploading')
        .map((session) => [session.id, session]),
    );
    if (ended.size === 0) return;
    const unsent = await this.deliveries.unsent('session.completed', [...ended.keys()]);
    await this.deliveries.savePayloads(
      unsent.map(({ id, resourceId, createdAt }) => ({
        id,
        payload: webhookBody(
          'session.completed',
          createdAt,
          toSessionResponse(ended.get(resourceId)!),
        ),
      })),
    );
  }

  /**
   * Read from PostgreSQL at scrape time, like hashq_jobs: every replica reports the same truth. The
   * two gauges of one scrape (collected at once) share one query.
   */
  private registerMetrics(metrics: MetricsService): void {
    let reading: ReturnType<WebhooksRepository['deliveryFigures']> | undefined;
    const figures = () =>
      (reading ??= this.deliveries.deliveryFigures().finally(() => (reading = undefined)));
    new Gauge({
      name: METRIC_NAMES.webhookDeliveries,
      help: `Webhook deliveries by status (PostgreSQL; ended ones are kept ${DELIVERY_RETENTION_DAYS} days)`,
      labelNames: ['status'],
      registers: [metrics.registry],
      async collect() {
        for (const [status, count] of Object.entries((await figures()).byStatus))
          this.set({ status }, count);
      },
    });
    new Gauge({
      name: METRIC_NAMES.webhookOldestPendingSeconds,
      help: 'Age of the oldest pending webhook delivery in seconds, 0 when none (PostgreSQL)',
      registers: [metrics.registry],
      async collect() {
        this.set((await figures()).oldestPendingSeconds);
      },
    });
  }

  protected periodMs(): number {
    return this.config.webhooks.pollMs;
  }

  protected failure(): { message: string } {
    return { message: 'webhook delivery round failed; retried at the next round' };
  }

  /** Claims due deliveries while fewer than IN_FLIGHT are under way, and starts them. */
  protected async run(): Promise<void> {
    if (this.claiming) return;
    this.claiming = true;
    try {
      if (Date.now() - this.prunedAt >= PRUNE_EVERY_MS) {
        this.prunedAt = Date.now();
        await this.deliveries.prune(DELIVERY_RETENTION_DAYS, 1000);
      }
      const claimSeconds = Math.ceil(this.config.webhooks.timeoutMs / 1000) + 30;
      while (this.inFlight.size < IN_FLIGHT) {
        const room = IN_FLIGHT - this.inFlight.size;
        const due = await this.deliveries.claimDue(room, claimSeconds);
        for (const delivery of due) this.start(delivery);
        if (due.length < room) return;
      }
    } finally {
      this.claiming = false;
    }
  }

  /** Waits for the attempts under way (each ends within WEBHOOK_TIMEOUT_MS) before the pool closes. */
  async onModuleDestroy(): Promise<void> {
    super.onModuleDestroy();
    await Promise.all(this.inFlight);
  }

  private start(delivery: ClaimedDelivery): void {
    const attempt: Promise<void> = this.attempt(delivery)
      .catch((err: unknown) =>
        // its claim runs out and it is tried again then
        this.logger.warn(
          { delivery: delivery.id, err: (err as Error).message },
          'webhook delivery attempt failed; tried again when its claim runs out',
        ),
      )
      .finally(() => this.inFlight.delete(attempt));
    this.inFlight.add(attempt);
  }

  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    let secret: string;
    try {
      secret = this.sealer
        .open(delivery.secret, webhookSecretBinding(delivery.endpointId))
        .toString('latin1');
    } catch (err) {
      if (!(err instanceof SealedStateError)) throw err;
      return this.failed(
        delivery,
        {
          httpStatus: null,
          error: `STATE_INVALID: the endpoint's secret does not open: ${err.message}`,
        },
        null,
      );
    }
    let body = delivery.payload;
    if (body === null) {
      const data = await this.render(delivery);
      // kept unless one is already (a deletion or expiry may have kept one: keepUnsentBodies)
      body =
        data === null
          ? await this.deliveries.payload(delivery.id)
          : await this.deliveries.keepPayload(
              delivery.id,
              webhookBody(delivery.type, delivery.createdAt, data),
            );
      if (body === null) {
        return this.failed(
          delivery,
          {
            httpStatus: null,
            error: `the ${delivery.type.split('.')[0]} ${delivery.resourceId} no longer exists`,
          },
          null,
        );
      }
    }
    const headers = signWebhook(secret, `msg_${delivery.id}`, Math.floor(Date.now() / 1000), body);
    const outcome = await postWebhook(delivery.url, headers, body, {
      guard: this.guard,
      timeoutMs: this.config.webhooks.timeoutMs,
    });
    if (outcome.ok) return this.deliveries.delivered(delivery.id, outcome.httpStatus as number);
    const waits = this.config.webhooks.retrySeconds;
    await this.failed(
      delivery,
      { httpStatus: outcome.httpStatus, error: outcome.error as string },
      delivery.attempts <= waits.length ? waits[delivery.attempts - 1] : null,
    );
  }

  private async failed(
    delivery: ClaimedDelivery,
    outcome: { httpStatus: number | null; error: string },
    retryInSeconds: number | null,
  ): Promise<void> {
    await this.deliveries.attemptFailed(delivery.id, outcome, retryInSeconds);
    if (retryInSeconds === null) {
      this.logger.warn(
        {
          delivery: delivery.id,
          endpoint: delivery.endpointId,
          attempts: delivery.attempts,
          error: outcome.error,
        },
        'webhook delivery failed for good',
      );
    }
  }

  /** The resource as its GET answers it, or null when it is gone. */
  private async render(delivery: ClaimedDelivery): Promise<object | null> {
    const { tenantId, resourceId } = delivery;
    try {
      switch (delivery.type) {
        case 'job.completed':
          return await this.jobs.get(tenantId, resourceId);
        case 'batch.completed':
          return await this.batches.get(resourceId, tenantId);
        case 'session.completed': {
          const session = await this.sessions.findById(resourceId, tenantId);
          return session ? toSessionResponse(session) : null;
        }
      }
    } catch (err) {
      if (err instanceof ApiError && err.getStatus() === HttpStatus.NOT_FOUND) return null;
      throw err;
    }
  }
}
