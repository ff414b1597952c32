import type { RowsSql } from '@hashq/database';

/** A tenant and its settings (migrations/1796500000000-CreateTenants.ts); null = the deployment's own. */
export interface Tenant {
  id: string;
  name: string;
  fileRoots: string[] | null;
  allowedHosts: string[] | null;
  allowedBuckets: string[] | null;
  maxRunningJobs: number | null;
  maxQueuedJobs: number | null;
  createdAt: Date;
}

export type NewTenant = Pick<Tenant, 'id' | 'name'> &
  Partial<Omit<Tenant, 'id' | 'name' | 'createdAt'>>;

interface TenantRow {
  id: string;
  name: string;
  file_roots: string[] | null;
  allowed_hosts: string[] | null;
  allowed_buckets: string[] | null;
  max_running_jobs: number | null;
  max_queued_jobs: number | null;
  created_at: Date;
}

/** Tenant ids: lower-case letters, digits and dashes (the table's CHECK says the same). */
export const TENANT_ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

function toTenant(row: TenantRow): Tenant {
  return {
    id: row.id,
    name: row.name,
    fileRoots: row.file_roots,
    allowedHosts: row.allowed_hosts,
    allowedBuckets: row.allowed_buckets,
    maxRunningJobs: row.max_running_jobs,
    maxQueuedJobs: row.max_queued_jobs,
    createdAt: row.created_at,
  };
}

/** How long settings() answers from memory: a change reaches every API instance within this. */
export const TENANT_SETTINGS_TTL_MS = 2000;

/**
 * Every statement on the tenants table. The limits on jobs are enforced in PostgreSQL itself (the
 * jobs_tenant_limits trigger and JobAdmission read the row fresh); settings() serves the checks
 * of a submission from a short cache.
 */
export class TenantsRepository {
  private readonly cache = new Map<string, { tenant: Tenant | null; until: number }>();

  constructor(private readonly db: RowsSql) {}

  /** Inserts the tenant; null when the id is taken. */
  async insert(tenant: NewTenant): Promise<Tenant | null> {
    const [row] = await this.db.rows<TenantRow>(
      `INSERT INTO tenants (id, name, file_roots, allowed_hosts, allowed_buckets, max_running_jobs, max_queued_jobs)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (id) DO NOTHING
       RETURNING *`,
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
    return row ? toTenant(row) : null;
  }

  async find(id: string): Promise<Tenant | null> {
    const [row] = await this.db.rows<TenantRow>(`SELECT * FROM tenants WHERE id = $1`, [id]);
    return row ? toTenant(row) : null;
  }

  async list(): Promise<Tenant[]> {
    return (await this.db.rows<TenantRow>(`SELECT * FROM tenants ORDER BY id`)).map(toTenant);
  }

  /** The tenant as of at most TENANT_SETTINGS_TTL_MS ago (null: no such tenant). */
  async settings(id: string): Promise<Tenant | null> {
    const cached = this.cache.get(id);
    if (cached && cached.until > Date.now()) return cached.tenant;
    const tenant = await this.find(id);
    this.cache.set(id, { tenant, until: Date.now() + TENANT_SETTINGS_TTL_MS });
    return tenant;
  }

  /** Drops the cached settings of one tenant, or of all. */
  forget(id?: string): void {
    if (id === undefined) this.cache.clear();
    else this.cache.delete(id);
  }
}
