import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';

import type { SourceRef } from '@hashq/jobs';
import { remoteRefusal, type Tenant, TenantsRepository } from '@hashq/jobs';
import { isWithin } from '@hashq/sources';
import { HttpStatus, Injectable } from '@nestjs/common';

import { ApiError } from '../common/api-error';

/** SQLSTATE of the jobs_tenant_limits trigger's refusal (migrations/1796700000000-TenantLimits.ts). */
const TENANT_QUEUE_FULL_SQLSTATE = 'HQ429';

export function realOrLexical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path); // a folder that does not exist holds no file
  }
}

export { hostAllowed } from '@hashq/jobs';

const notAllowed = (tenant: Tenant, message: string, details: object): ApiError =>
  new ApiError(HttpStatus.FORBIDDEN, 'SOURCE_NOT_ALLOWED', message, {
    tenant: tenant.id,
    ...details,
  });

/**
 * What a tenant may submit, on top of what the deployment allows (JobSourceResolver has already
 * checked HASHQ_FILE_ROOTS and HASHQ_ALLOW_HOSTS): file sources beneath the tenant's file_roots,
 * URLs naming its allowed_hosts, s3 objects in its allowed_buckets. A null setting narrows nothing.
 * max_queued_jobs and max_running_jobs are enforced by PostgreSQL at insert (see JobAdmission).
 */
@Injectable()
export class TenantPolicy {
  private readonly realRoots = new Map<string, string>();

  constructor(private readonly tenants: TenantsRepository) {}

  /** Throws the API's refusal when the tenant may not hash `source` (a resolved, normalized source). */
  async checkSource(tenantId: string, source: SourceRef): Promise<void> {
    const tenant = await this.tenants.settings(tenantId);
    if (!tenant) throw new Error(`unknown tenant ${tenantId}`);
    switch (source.type) {
      case 'file':
        if (tenant.fileRoots && !tenant.fileRoots.some((root) => this.contains(root, source.path)))
          throw new ApiError(
            HttpStatus.FORBIDDEN,
            'PATH_OUTSIDE_ROOTS',
            'file path is outside the allowed roots',
            { path: source.path },
          );
        return;
      case 'http':
      case 's3': {
        const refusal = remoteRefusal(tenant, source);
        if (refusal) throw notAllowed(tenant, refusal.message, refusal.details);
        return;
      }
    }
  }

  /** A tenant root's real path (symlinks resolved once: the source path is a real path too). */
  private contains(root: string, path: string): boolean {
    let real = this.realRoots.get(root);
    if (real === undefined) {
      real = realOrLexical(root);
      this.realRoots.set(root, real);
    }
    return isWithin(real, path);
  }
}

/**
 * The jobs_tenant_limits trigger's refusal of an insert (max_queued_jobs reached) as the API's
 * 429 TENANT_QUEUE_FULL; anything else is rethrown as it is.
 */
export function tenantQueueFull(tenantId: string) {
  return (err: unknown): never => {
    if ((err as { code?: unknown }).code === TENANT_QUEUE_FULL_SQLSTATE) {
      throw new ApiError(
        HttpStatus.TOO_MANY_REQUESTS,
        'TENANT_QUEUE_FULL',
        'the tenant has as many queued jobs as it may (max_queued_jobs); retry when some have started',
        { tenant: tenantId },
      );
    }
    throw err;
  };
}
