import { rawRows } from '@hashq/database';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';

/**
 * A tenant and its settings. A null setting is "no narrower than the deployment" (HASHQ_FILE_ROOTS,
 * HASHQ_ALLOW_HOSTS, any bucket, no limit); an empty list allows nothing of that kind.
 */
export interface Tenant {
  id: string;
  name: string;
  /** Folders its file sources must lie in (real paths compared), within HASHQ_FILE_ROOTS. */
  fileRoots: string[] | null;
  /** Hosts its http(s) sources may name: `host` exactly, or `*.suffix` for any name below suffix. */
  allowedHosts: string[] | null;
  /** Buckets its s3 sources may name. */
  allowedBuckets: string[] | null;
  /** Its jobs admitted to run (dispatched or running) at once; see JobAdmission. */
  maxRunningJobs: number | null;
  /** Its queued jobs at most; a submission beyond → 429 TENANT_QUEUE_FULL. */
  maxQueuedJobs: number | null;
}

export type NewTenant = Pick<Tenant, 'id' | 'name'> & Partial<Omit<Tenant, 'id' | 'name'>>;

interface TenantRow {
  id: string;
  name: string;
  file_roots: string[] | null;
  allowed_hosts: string[] | null;
  allowed_buckets: string[] | null;
  max_running_jobs: number | null;
  max_queued_jobs: number | null;
}

const COLUMNS = `id, name, file_roots, allowed_hosts, allowed_buckets, max_running_jobs, max_queued_jobs`;

/** How long settings() answers from memory: a change reaches every API instance within this. */
export const TENANT_SETTINGS_TTL_MS = 2000;

function toTenant(row: TenantRow): Tenant {
  return {
    id: row.id,
    name: row.name,
    fileRoots: row.file_roots,
    allowedHosts: row.allowed_hosts,
    allowedBuckets: row.allowed_buckets,
    maxRunningJobs: row.max_running_jobs,
    maxQueuedJobs: row.max_queued_jobs,
  };
}

/**
 * Every statement on the tenants table. The limits on jobs are enforced in PostgreSQL itself (the
 * jobs_tenant_limits trigger and JobAdmission read the row fresh); settings() serves the checks
 * of a submission from a short cache.
 */
@Injectable()
export class TenantsRepository {
  private readonly cache = new Map<string, { tenant: Tenant | null; until: number }>();

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async findById(id: string): Promise<Tenant | null> {
    const rows: TenantRow[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM tenants WHERE id = $1`,
      [id],
    );
    return rows.length === 1 ? toTenant(rows[0]) : null;
  }

  async create(tenant: NewTenant): Promise<Tenant> {
    const result: unknown = await this.dataSource.query(
      `INSERT INTO tenants (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
      [
        tenant.id,
        tenant.name,
        tenant.fileRoots ?? null,
        tenant.allowedHosts ?? null,
        tenant.allowedBuckets ?? null,
        tenant.maxRunningJobs ?? null,
        tenant.maxQueuedJobs ?? null,
      ],
    );
    this.forget(tenant.id);
    return toTenant(rawRows<TenantRow>(result)[0]);
  }

  /** The tenant as of at most TENANT_SETTINGS_TTL_MS ago (null: no such tenant). */
  async settings(id: string): Promise<Tenant | null> {
    const cached = this.cache.get(id);
    if (cached && cached.until > Date.now()) return cached.tenant;
    const tenant = await this.findById(id);
    this.cache.set(id, { tenant, until: Date.now() + TENANT_SETTINGS_TTL_MS });
    return tenant;
  }

  /** Drops the cached settings of one tenant, or of all. */
  forget(id?: string): void {
    if (id === undefined) this.cache.clear();
    else this.cache.delete(id);
  }
}
