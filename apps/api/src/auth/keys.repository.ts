import type { RowsSql } from '@hashq/database';

import type { Scope } from './principal';

/** An api_keys row without its hash (what lists show). */
export interface ApiKeyRecord {
  id: string;
  tenantId: string;
  name: string;
  scopes: Scope[];
  createdAt: Date;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** A row with its secret hash and whether it is usable now by PostgreSQL's clock. */
export interface StoredApiKey extends ApiKeyRecord {
  secretHash: Buffer;
}

export interface NewApiKey {
  id: string;
  tenantId: string;
  name: string;
  scopes: readonly Scope[];
  secretHash: Buffer;
  expiresAt: Date | null;
}

interface KeyRow {
  id: string;
  tenant_id: string;
  name: string;
  scopes: Scope[];
  secret_hash?: Buffer;
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

const PUBLIC_COLUMNS =
  'id, tenant_id, name, scopes, created_at, expires_at, last_used_at, revoked_at';

function toRecord(row: KeyRow): ApiKeyRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    name: row.name,
    scopes: row.scopes,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  };
}

/** Every statement on api_keys (migrations/1796600000000-CreateApiKeys.ts). */
export class KeysRepository {
  constructor(private readonly db: RowsSql) {}

  async insert(key: NewApiKey): Promise<ApiKeyRecord> {
    const [row] = await this.db.rows<KeyRow>(
      `INSERT INTO api_keys (id, tenant_id, name, scopes, secret_hash, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6)
       RETURNING ${PUBLIC_COLUMNS}`,
      [key.id, key.tenantId, key.name, key.scopes, key.secretHash, key.expiresAt],
    );
    return toRecord(row);
  }

  /** The key with its hash, whatever its state (the caller checks expiry and revocation). */
  async findWithSecret(id: string): Promise<StoredApiKey | null> {
    const [row] = await this.db.rows<KeyRow>(
      `SELECT ${PUBLIC_COLUMNS}, secret_hash FROM api_keys WHERE id = $1`,
      [id],
    );
    return row ? { ...toRecord(row), secretHash: row.secret_hash! } : null;
  }

  /** Keys of one tenant (or of all when `tenantId` is null), oldest first, revoked ones included. */
  async list(tenantId: string | null): Promise<ApiKeyRecord[]> {
    const rows = await this.db.rows<KeyRow>(
      `SELECT ${PUBLIC_COLUMNS} FROM api_keys WHERE $1::text IS NULL OR tenant_id = $1
        ORDER BY created_at, id`,
      [tenantId],
    );
    return rows.map(toRecord);
  }

  /**
   * Revokes the key (of `tenantId` when given); a key already revoked keeps its first revocation
   * time. Null when there is no such key.
   */
  async revoke(id: string, tenantId: string | null): Promise<ApiKeyRecord | null> {
    const [row] = await this.db.rows<KeyRow>(
      `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now())
        WHERE id = $1 AND ($2::text IS NULL OR tenant_id = $2)
        RETURNING ${PUBLIC_COLUMNS}`,
      [id, tenantId],
    );
    return row ? toRecord(row) : null;
  }

  /** Records a use; skipped when the last one recorded is under `minSeconds` old. */
  async touch(id: string, minSeconds: number): Promise<void> {
    await this.db.rows(
      `UPDATE api_keys SET last_used_at = now()
        WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - make_interval(secs => $2))`,
      [id, minSeconds],
    );
  }
}
