import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';

import { hostAllowed, isWithin } from '@hashq/sources';

import type { SourceRef } from './source-ref';
import type { Tenant } from './tenants.repository';

export { hostAllowed };

/** Why a tenant may not read a remote source. */
export interface RemoteRefusal {
  code: 'SOURCE_NOT_ALLOWED';
  message: string;
  details: { host: string } | { bucket: string };
}

/**
 * The tenant's allowed_hosts and allowed_buckets applied to a remote source (null when allowed;
 * a null setting narrows nothing). File sources are the file_roots' business: see
 * tenantFileRoots (the API checks real paths, the worker opens files beneath the roots).
 */
export function remoteRefusal(
  tenant: Pick<Tenant, 'allowedHosts' | 'allowedBuckets'>,
  source: SourceRef,
): RemoteRefusal | null {
  if (source.type === 'http') {
    const host = new URL(source.url).hostname.replace(/^\[(.*)\]$/, '$1');
    if (tenant.allowedHosts && !hostAllowed(tenant.allowedHosts, host))
      return {
        code: 'SOURCE_NOT_ALLOWED',
        message: `host ${host} is not among the tenant's allowed hosts`,
        details: { host },
      };
  }
  if (
    source.type === 's3' &&
    tenant.allowedBuckets &&
    !tenant.allowedBuckets.includes(source.bucket)
  )
    return {
      code: 'SOURCE_NOT_ALLOWED',
      message: `bucket ${source.bucket} is not among the tenant's allowed buckets`,
      details: { bucket: source.bucket },
    };
  return null;
}

/**
 * The roots a tenant's file sources open beneath: its file_roots that lie inside the deployment's
 * HASHQ_FILE_ROOTS (the deployment's own roots when the tenant sets none).
 */
export function tenantFileRoots(
  tenantRoots: readonly string[] | null | undefined,
  deploymentRoots: readonly string[],
): string[] {
  if (!tenantRoots) return [...deploymentRoots];
  const deployment = deploymentRoots.map((root) => resolve(root));
  return tenantRoots.filter((root) => deployment.some((base) => isWithin(base, resolve(root))));
}

/**
 * The real paths of roots (the stored paths of files are real paths): what file items and grouped
 * jobs open beneath; a root that does not resolve stays as given.
 */
export function realRoots(roots: readonly string[]): string[] {
  return roots.map((root) => {
    try {
      return realpathSync(root);
    } catch {
      return root;
    }
  });
}
