import type { NewTenant } from '@hashq/jobs';
import { DEFAULT_TENANT, type Tenant, TenantsRepository } from '@hashq/jobs';
import { HttpStatus, Injectable, Optional } from '@nestjs/common';

import { ApiError } from '../common/api-error';
import { issueKey } from './api-key';
import { KeyVerifier } from './key-verifier';
import { type ApiKeyRecord, KeysRepository } from './keys.repository';
import type { Principal, Scope } from './principal';
import { hasScopeIn } from './scopes';

export interface KeyRequest {
  tenantId?: string;
  name: string;
  scopes: Scope[];
  expiresAt?: Date;
}

/** The key as lists show it, plus the secret key on creation (the only time it is ever shown). */
export interface KeyView {
  id: string;
  tenant: string;
  name: string;
  scopes: Scope[];
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
  key?: string;
}

const iso = (date: Date | null) => (date ? date.toISOString() : null);

export function keyView(record: ApiKeyRecord, key?: string): KeyView {
  return {
    id: record.id,
    tenant: record.tenantId,
    name: record.name,
    scopes: record.scopes,
    createdAt: record.createdAt.toISOString(),
    expiresAt: iso(record.expiresAt),
    lastUsedAt: iso(record.lastUsedAt),
    revokedAt: iso(record.revokedAt),
    ...(key === undefined ? {} : { key }),
  };
}

/**
 * The operator: an admin key of the default tenant (what `npm run keys` and `npm start` make).
 * It manages every tenant's keys and the tenants; an admin key of another tenant only its own
 * tenant's keys, and another tenant's key is 404 to it, exactly like a missing one.
 */
export function isOperator(principal: Principal): boolean {
  return principal.tenantId === DEFAULT_TENANT && principal.scopes.includes('admin');
}

/** Creating, listing and revoking keys, and tenants (the API and the `keys` command share it). */
@Injectable()
export class ApiKeysService {
  constructor(
    private readonly keys: KeysRepository,
    private readonly tenants: TenantsRepository,
    @Optional() private readonly verifier?: KeyVerifier,
  ) {}

  /** A new key: its record and the secret key, returned once. */
  async create(caller: Principal, request: KeyRequest): Promise<KeyView> {
    const tenantId = request.tenantId ?? caller.tenantId;
    if (!(await this.visibleTenant(caller, tenantId))) throw tenantNotFound(tenantId);
    const beyond = request.scopes.filter((scope) => !hasScopeIn(caller.scopes, scope));
    if (beyond.length > 0) {
      throw new ApiError(
        HttpStatus.FORBIDDEN,
        'SCOPE_MISSING',
        `a key cannot grant scopes it lacks: ${beyond.join(', ')}`,
        { required: beyond },
      );
    }
    if (request.expiresAt && request.expiresAt.getTime() <= Date.now()) {
      throw ApiError.validation('expiresAt must be in the future', { field: 'expiresAt' });
    }
    const issued = issueKey();
    const record = await this.keys.insert({
      id: issued.id,
      tenantId,
      name: request.name,
      scopes: [...new Set(request.scopes)],
      secretHash: issued.secretHash,
      expiresAt: request.expiresAt ?? null,
    });
    this.verifier?.forget(issued.id);
    return keyView(record, issued.key);
  }

  async list(caller: Principal, tenantId?: string): Promise<KeyView[]> {
    const scope = isOperator(caller) ? (tenantId ?? null) : caller.tenantId;
    if (tenantId !== undefined && scope !== tenantId) return [];
    return (await this.keys.list(scope)).map((record) => keyView(record));
  }

  /** Revokes at once in this instance, within KEY_CACHE_MS in the others. */
  async revoke(caller: Principal, id: string): Promise<KeyView> {
    const record = /^[0-9a-f]{16}$/.test(id)
      ? await this.keys.revoke(id, isOperator(caller) ? null : caller.tenantId)
      : null;
    if (!record) {
      throw new ApiError(HttpStatus.NOT_FOUND, 'KEY_NOT_FOUND', `no key with id ${id}`, { id });
    }
    this.verifier?.forget(id);
    return keyView(record);
  }

  async createTenant(tenant: NewTenant): Promise<Tenant> {
    const created = await this.tenants.insert(tenant);
    if (!created) {
      throw new ApiError(HttpStatus.CONFLICT, 'TENANT_EXISTS', `tenant ${tenant.id} exists`, {
        id: tenant.id,
      });
    }
    return created;
  }

  listTenants(): Promise<Tenant[]> {
    return this.tenants.list();
  }

  private async visibleTenant(caller: Principal, tenantId: string): Promise<boolean> {
    if (!isOperator(caller) && tenantId !== caller.tenantId) return false;
    return (await this.tenants.find(tenantId)) !== null;
  }
}

function tenantNotFound(id: string): ApiError {
  return new ApiError(HttpStatus.NOT_FOUND, 'TENANT_NOT_FOUND', `no tenant ${id}`, { id });
}
