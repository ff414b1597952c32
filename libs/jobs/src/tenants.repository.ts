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

/** Every statement on the tenants table. */
export class TenantsRepository {
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
    return row ? toTenant(row) : null;
  }

  async find(id: string): Promise<Tenant | null> {
    const [row] = await this.db.rows<TenantRow>(`SELECT * FROM tenants WHERE id = $1`, [id]);
    return row ? toTenant(row) : null;
  }

  async list(): Promise<Tenant[]> {
    return (await this.db.rows<TenantRow>(`SELECT * FROM tenants ORDER BY id`)).map(toTenant);
  }
}
