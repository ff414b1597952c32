import { randomUUID } from 'node:crypto';

import type { RowsSql } from '@hashq/database';

/** The events an endpoint may ask for (migrations/1797000000000-CreateWebhooks.ts queues them). */
export const WEBHOOK_EVENTS = ['job.completed', 'batch.completed', 'session.completed'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export interface WebhookEndpoint {
  id: string;
  tenantId: string;
  url: string;
  events: WebhookEvent[];
  createdAt: Date;
}

export interface WebhookDelivery {
  id: string;
  endpointId: string;
  type: WebhookEvent;
  resourceId: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  nextAttemptAt: Date;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: Date;
  deliveredAt: Date | null;
}

/** A delivery taken for an attempt, with what sending it needs. */
export interface ClaimedDelivery extends WebhookDelivery {
  tenantId: string;
  url: string;
  /** Sealed (bound to the endpoint id). */
  secret: Buffer;
  /** The body of the first attempt, sent again unchanged by every later one. */
  payload: string | null;
}

interface EndpointRow {
  id: string;
  tenant_id: string;
  url: string;
  events: WebhookEvent[];
  created_at: Date;
}

interface DeliveryRow {
  id: string;
  endpoint_id: string;
  type: WebhookEvent;
  resource_id: string;
  status: WebhookDelivery['status'];
  attempts: number;
  next_attempt_at: Date;
  last_status: number | null;
  last_error: string | null;
  created_at: Date;
  delivered_at: Date | null;
}

const ENDPOINT_COLUMNS = 'id, tenant_id, url, events, created_at';
const DELIVERY_COLUMNS =
  'id, endpoint_id, type, resource_id, status, attempts, next_attempt_at, last_status, last_error, created_at, delivered_at';

const toEndpoint = (row: EndpointRow): WebhookEndpoint => ({
  id: row.id,
  tenantId: row.tenant_id,
  url: row.url,
  events: row.events,
  createdAt: row.created_at,
});

const toDelivery = (row: DeliveryRow): WebhookDelivery => ({
  id: row.id,
  endpointId: row.endpoint_id,
  type: row.type,
  resourceId: row.resource_id,
  status: row.status,
  attempts: row.attempts,
  nextAttemptAt: row.next_attempt_at,
  lastStatus: row.last_status,
  lastError: row.last_error,
  createdAt: row.created_at,
  deliveredAt: row.delivered_at,
});

/**
 * Every statement on webhook_endpoints and webhook_deliveries; the only other writer is the
 * webhook_event trigger, which queues the deliveries of an ended job, batch or session.
 */
export class WebhooksRepository {
  constructor(private readonly sql: RowsSql) {}

  /**
   * A new endpoint, unless its tenant has `max` already (null then); `seal` turns its id into the
   * sealed secret (the seal is bound to the id). Creations of one tenant are serialized (a
   * transaction-scoped advisory lock), so two at once cannot both pass the count.
   */
  async create(
    endpoint: { tenantId: string; url: string; events: readonly WebhookEvent[] },
    seal: (id: string) => Buffer,
    max: number,
  ): Promise<WebhookEndpoint | null> {
    const id = randomUUID();
    return this.sql.transaction(async (tx) => {
      await tx.rows(
        `SELECT pg_advisory_xact_lock(hashtextextended('webhook_endpoints:' || $1, 0))`,
        [endpoint.tenantId],
      );
      const [row] = await tx.rows<EndpointRow>(
        `INSERT INTO webhook_endpoints (id, tenant_id, url, events, secret)
         SELECT $1, $2, $3, $4, $5
          WHERE (SELECT count(*) FROM webhook_endpoints WHERE tenant_id = $2) < $6
         RETURNING ${ENDPOINT_COLUMNS}`,
        [id, endpoint.tenantId, endpoint.url, endpoint.events, seal(id), max],
      );
      return row ? toEndpoint(row) : null;
    });
  }

  async list(tenantId: string): Promise<WebhookEndpoint[]> {
    const rows = await this.sql.rows<EndpointRow>(
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE tenant_id = $1 ORDER BY created_at, id`,
      [tenantId],
    );
    return rows.map(toEndpoint);
  }

  async find(tenantId: string, id: string): Promise<WebhookEndpoint | null> {
    const [row] = await this.sql.rows<EndpointRow>(
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1 AND tenant_id = $2`,
      [id, tenantId],
    );
    return row ? toEndpoint(row) : null;
  }

  /** Deletes the endpoint and its deliveries (pending ones are not sent); false if none was deleted. */
  async delete(tenantId: string, id: string): Promise<boolean> {
    const rows = await this.sql.rows<{ id: string }>(
      `DELETE FROM webhook_endpoints WHERE id = $1 AND tenant_id = $2 RETURNING id`,
      [id, tenantId],
    );
    return rows.length > 0;
  }

  /** The endpoint's latest deliveries, newest first. */
  async deliveries(endpointId: string, limit: number): Promise<WebhookDelivery[]> {
    const rows = await this.sql.rows<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE endpoint_id = $1
        ORDER BY created_at DESC, id DESC LIMIT $2`,
      [endpointId, limit],
    );
    return rows.map(toDelivery);
  }

  /**
   * Takes up to `limit` due deliveries for one attempt each: the attempt is counted and the next
   * one put `leaseSeconds` ahead, so a delivery whose sender dies is tried again then, and another
   * instance polling meanwhile skips it (SKIP LOCKED, then the moved time).
   */
  async claimDue(limit: number, leaseSeconds: number): Promise<ClaimedDelivery[]> {
    const rows = await this.sql.rows<
      DeliveryRow & { tenant_id: string; url: string; secret: Buffer; payload: string | null }
    >(
      `WITH due AS (
         SELECT id FROM webhook_deliveries
          WHERE status = 'pending' AND next_attempt_at <= now()
          ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
       UPDATE webhook_deliveries d
          SET attempts = d.attempts + 1, next_attempt_at = now() + make_interval(secs => $2)
         FROM due, webhook_endpoints e
        WHERE d.id = due.id AND e.id = d.endpoint_id
       RETURNING d.id, d.endpoint_id, d.type, d.resource_id, d.status, d.attempts, d.next_attempt_at,
                 d.last_status, d.last_error, d.created_at, d.delivered_at, d.payload,
                 e.tenant_id, e.url, e.secret`,
      [limit, leaseSeconds],
    );
    return rows.map((row) => ({
      ...toDelivery(row),
      tenantId: row.tenant_id,
      url: row.url,
      secret: row.secret,
      payload: row.payload,
    }));
  }

  /** Deletes up to `limit` deliveries that ended (delivered or failed) more than `days` ago; how many. */
  async prune(days: number, limit: number): Promise<number> {
    const rows = await this.sql.rows<{ id: string }>(
      `DELETE FROM webhook_deliveries WHERE id IN (
         SELECT id FROM webhook_deliveries
          WHERE status <> 'pending' AND created_at < now() - make_interval(days => $1)
          ORDER BY created_at LIMIT $2)
       RETURNING id`,
      [days, limit],
    );
    return rows.length;
  }

  /**
   * Deliveries by status (ended ones are kept DELIVERY_RETENTION_DAYS), and the age in seconds of
   * the oldest pending one (0: none): the figures of /metrics.
   */
  async deliveryFigures(): Promise<{
    byStatus: Record<'pending' | 'delivered' | 'failed', number>;
    oldestPendingSeconds: number;
  }> {
    const [row] = await this.sql.rows<{
      pending: number;
      delivered: number;
      failed: number;
      oldest: number;
    }>(
      `SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending,
              count(*) FILTER (WHERE status = 'delivered')::int AS delivered,
              count(*) FILTER (WHERE status = 'failed')::int AS failed,
              COALESCE(extract(epoch FROM now() - min(created_at) FILTER (WHERE status = 'pending')), 0)::float8 AS oldest
         FROM webhook_deliveries`,
    );
    const { pending, delivered, failed, oldest } = row;
    return { byStatus: { pending, delivered, failed }, oldestPendingSeconds: oldest };
  }

  /**
   * Keeps the first attempt's body, so that every retry sends the very same bytes; the body kept,
   * `payload` or one kept before (null: the delivery is gone).
   */
  async keepPayload(id: string, payload: string): Promise<string | null> {
    const [row] = await this.sql.rows<{ payload: string }>(
      `UPDATE webhook_deliveries SET payload = COALESCE(payload, $2) WHERE id = $1 RETURNING payload`,
      [id, payload],
    );
    return row?.payload ?? null;
  }

  /** The deliveries of `type` for these resources whose body is not made yet. */
  async unsent(
    type: WebhookEvent,
    resourceIds: string[],
  ): Promise<{ id: string; resourceId: string; createdAt: Date }[]> {
    const rows = await this.sql.rows<{ id: string; resource_id: string; created_at: Date }>(
      `SELECT id, resource_id, created_at FROM webhook_deliveries
        WHERE resource_id = ANY($1::uuid[]) AND payload IS NULL AND type = $2`,
      [resourceIds, type],
    );
    return rows.map((row) => ({
      id: row.id,
      resourceId: row.resource_id,
      createdAt: row.created_at,
    }));
  }

  /** Keeps bodies made before a first attempt (keepPayload, many at once). */
  async savePayloads(items: { id: string; payload: string }[]): Promise<void> {
    if (items.length === 0) return;
    await this.sql.rows(
      `UPDATE webhook_deliveries d SET payload = v.payload
         FROM unnest($1::uuid[], $2::text[]) AS v (id, payload)
        WHERE d.id = v.id AND d.payload IS NULL`,
      [items.map((item) => item.id), items.map((item) => item.payload)],
    );
  }

  /** A delivery's kept body, null when none was made (or the delivery is gone). */
  async payload(id: string): Promise<string | null> {
    const [row] = await this.sql.rows<{ payload: string | null }>(
      `SELECT payload FROM webhook_deliveries WHERE id = $1`,
      [id],
    );
    return row?.payload ?? null;
  }

  async delivered(id: string, httpStatus: number): Promise<void> {
    await this.sql.rows(
      `UPDATE webhook_deliveries SET status = 'delivered', delivered_at = now(), last_status = $2, last_error = NULL
        WHERE id = $1`,
      [id, httpStatus],
    );
  }

  /** An attempt that failed: tried again in `retryInSeconds`, or (null) failed for good. */
  async attemptFailed(
    id: string,
    outcome: { httpStatus: number | null; error: string },
    retryInSeconds: number | null,
  ): Promise<void> {
    await this.sql.rows(
      `UPDATE webhook_deliveries
          SET last_status = $2, last_error = $3,
              status = CASE WHEN $4::int IS NULL THEN 'failed' ELSE 'pending' END,
              next_attempt_at = CASE WHEN $4::int IS NULL THEN next_attempt_at
                                     ELSE now() + make_interval(secs => $4::int) END
        WHERE id = $1`,
      [id, outcome.httpStatus, outcome.error.slice(0, 500), retryInSeconds],
    );
  }
}
