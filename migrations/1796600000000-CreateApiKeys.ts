import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * API keys (issue 15): `hq_<id>_<secret>`; only SHA-256 of the secret is stored (secret_hash):
 * the secret is 32 random bytes, so no slow password hash is needed (see apps/api/src/auth/api-key.ts).
 * A key is never deleted, only revoked, so the record of who held which scopes stays.
 */
export class CreateApiKeys1796600000000 implements MigrationInterface {
  name = 'CreateApiKeys1796600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE api_keys (
        id text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{16}$'),
        tenant_id text NOT NULL REFERENCES tenants (id),
        name text NOT NULL,
        scopes text[] NOT NULL,
        secret_hash bytea NOT NULL CHECK (octet_length(secret_hash) = 32),
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz,
        last_used_at timestamptz,
        revoked_at timestamptz
      )`);
    await queryRunner.query(`CREATE INDEX api_keys_tenant_idx ON api_keys (tenant_id, created_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE api_keys`);
  }
}
