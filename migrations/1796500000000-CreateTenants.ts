import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tenants (issue 15): every job, benchmark run and digest session belongs to one. Rows that
 * existed before tenants belong to the `default` tenant, which is also the tenant of local use
 * without keys (HASHQ_AUTH=off). A NULL setting means "no narrower than the deployment".
 */
export class CreateTenants1796500000000 implements MigrationInterface {
  name = 'CreateTenants1796500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE tenants (
        id text PRIMARY KEY CHECK (id ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
        name text NOT NULL,
        file_roots text[],
        allowed_hosts text[],
        allowed_buckets text[],
        max_running_jobs int CHECK (max_running_jobs > 0),
        max_queued_jobs int CHECK (max_queued_jobs > 0),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`INSERT INTO tenants (id, name) VALUES ('default', 'default')`);
    for (const table of ['jobs', 'benchmark_runs', 'digest_sessions']) {
      await queryRunner.query(
        `ALTER TABLE ${table} ADD COLUMN tenant_id text NOT NULL DEFAULT 'default' REFERENCES tenants (id)`,
      );
    }
    // Idempotency keys are per tenant: two tenants may use the same key.
    await queryRunner.query(`ALTER TABLE jobs DROP CONSTRAINT jobs_idempotency_key_key`);
    await queryRunner.query(
      `ALTER TABLE jobs ADD CONSTRAINT jobs_tenant_idempotency_key_key UNIQUE (tenant_id, idempotency_key)`,
    );
    await queryRunner.query(
      `CREATE INDEX jobs_tenant_created_at_id_idx ON jobs (tenant_id, created_at DESC, id DESC)`,
    );
    await queryRunner.query(
      `CREATE INDEX jobs_tenant_running_idx ON jobs (tenant_id) WHERE status = 'running'`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX jobs_tenant_running_idx`);
    await queryRunner.query(`DROP INDEX jobs_tenant_created_at_id_idx`);
    await queryRunner.query(`ALTER TABLE jobs DROP CONSTRAINT jobs_tenant_idempotency_key_key`);
    await queryRunner.query(
      `ALTER TABLE jobs ADD CONSTRAINT jobs_idempotency_key_key UNIQUE (idempotency_key)`,
    );
    for (const table of ['jobs', 'benchmark_runs', 'digest_sessions']) {
      await queryRunner.query(`ALTER TABLE ${table} DROP COLUMN tenant_id`);
    }
    await queryRunner.query(`DROP TABLE tenants`);
  }
}
