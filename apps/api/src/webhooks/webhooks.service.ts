import { StateSealer, webhookSecretBinding } from '@hashq/crypto';
import { remoteRefusal, TenantsRepository } from '@hashq/jobs';
import { NetGuard, SourceError } from '@hashq/sources';
import { HttpStatus, Injectable } from '@nestjs/common';

import { ApiError } from '../common/api-error';
import { isUuid } from '../jobs/cursor';
import { newWebhookSecret } from './webhook-signature';
import {
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEvent,
  WebhooksRepository,
} from './webhooks.repository';

/** Endpoints one tenant may have: each ended job, batch or session is one request per endpoint. */
export const MAX_ENDPOINTS_PER_TENANT = 16;

/** An endpoint as the API shows it; `secret` only in the answer that creates it. */
export interface WebhookEndpointView {
  id: string;
  url: string;
  events: WebhookEvent[];
  createdAt: string;
  secret?: string;
}

export interface WebhookDeliveryView {
  id: string;
  type: WebhookEvent;
  resourceId: string;
  status: WebhookDelivery['status'];
  attempts: number;
  nextAttemptAt: string | null;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: string;
  deliveredAt: string | null;
}

const view = (endpoint: WebhookEndpoint, secret?: string): WebhookEndpointView => ({
  id: endpoint.id,
  url: endpoint.url,
  events: endpoint.events,
  createdAt: endpoint.createdAt.toISOString(),
  ...(secret === undefined ? {} : { secret }),
});

const deliveryView = (delivery: WebhookDelivery): WebhookDeliveryView => ({
  id: delivery.id,
  type: delivery.type,
  resourceId: delivery.resourceId,
  status: delivery.status,
  attempts: delivery.attempts,
  nextAttemptAt: delivery.status === 'pending' ? delivery.nextAttemptAt.toISOString() : null,
  lastStatus: delivery.lastStatus,
  lastError: delivery.lastError,
  createdAt: delivery.createdAt.toISOString(),
  deliveredAt: delivery.deliveredAt?.toISOString() ?? null,
});

/** A tenant's webhook endpoints (README "Webhooks"). Another tenant's endpoint is WEBHOOK_NOT_FOUND. */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly endpoints: WebhooksRepository,
    private readonly tenants: TenantsRepository,
    private readonly sealer: StateSealer,
    private readonly guard: NetGuard,
  ) {}

  async create(
    tenantId: string,
    request: { url: string; events: WebhookEvent[] },
  ): Promise<WebhookEndpointView> {
    await this.checkUrl(tenantId, request.url);
    const secret = newWebhookSecret();
    const endpoint = await this.endpoints.create(
      { tenantId, url: request.url, events: [...new Set(request.events)] },
      (id) => this.sealer.seal(Buffer.from(secret, 'latin1'), webhookSecretBinding(id)),
      MAX_ENDPOINTS_PER_TENANT,
    );
    if (!endpoint) {
      throw new ApiError(
        HttpStatus.TOO_MANY_REQUESTS,
        'WEBHOOK_LIMIT_REACHED',
        `a tenant has at most ${MAX_ENDPOINTS_PER_TENANT} webhook endpoints`,
        { limit: MAX_ENDPOINTS_PER_TENANT },
      );
    }
    return view(endpoint, secret);
  }

  async list(tenantId: string): Promise<WebhookEndpointView[]> {
    return (await this.endpoints.list(tenantId)).map((endpoint) => view(endpoint));
  }

  async get(tenantId: string, id: string): Promise<WebhookEndpointView> {
    return view(await this.findOrFail(tenantId, id));
  }

  async delete(tenantId: string, id: string): Promise<void> {
    if (!isUuid(id) || !(await this.endpoints.delete(tenantId, id))) throw notFound(id);
  }

  /** The endpoint's latest 100 deliveries, newest first. */
  async deliveries(tenantId: string, id: string): Promise<WebhookDeliveryView[]> {
    const endpoint = await this.findOrFail(tenantId, id);
    return (await this.endpoints.deliveries(endpoint.id, 100)).map(deliveryView);
  }

  private async findOrFail(tenantId: string, id: string): Promise<WebhookEndpoint> {
    const endpoint = isUuid(id) ? await this.endpoints.find(tenantId, id) : null;
    if (!endpoint) throw notFound(id);
    return endpoint;
  }

  /**
   * http(s), no credentials in it, and a host the deployment (HASHQ_ALLOW_HOSTS, for an address
   * literal; a name is checked on every connection) and the tenant (allowed_hosts) allow.
   */
  private async checkUrl(tenantId: string, url: string): Promise<void> {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      throw ApiError.badRequest('INVALID_WEBHOOK_URL', `not an absolute URL: "${url}"`);
    }
    if (target.protocol !== 'http:' && target.protocol !== 'https:') {
      throw ApiError.badRequest(
        'INVALID_WEBHOOK_URL',
        `a webhook URL is http or https, got ${target.protocol}`,
      );
    }
    if (target.username !== '' || target.password !== '') {
      throw ApiError.badRequest(
        'INVALID_WEBHOOK_URL',
        'a webhook URL carries no user name or password',
      );
    }
    try {
      this.guard.assertHostAllowed(target.hostname);
    } catch (err) {
      if (!(err instanceof SourceError)) throw err;
      throw new ApiError(
        HttpStatus.FORBIDDEN,
        'SOURCE_ADDRESS_FORBIDDEN',
        err.message,
        err.details,
      );
    }
    // the tenant's allowed_hosts, as for its http sources
    const tenant = await this.tenants.find(tenantId);
    const refusal = tenant && remoteRefusal(tenant, { type: 'http', url });
    if (refusal) {
      throw new ApiError(HttpStatus.FORBIDDEN, refusal.code, refusal.message, {
        tenant: tenantId,
        ...refusal.details,
      });
    }
  }
}

const notFound = (id: string) =>
  new ApiError(HttpStatus.NOT_FOUND, 'WEBHOOK_NOT_FOUND', `webhook endpoint ${id} not found`, {
    id,
  });
