import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Per-tenant limits on jobs (issue 15, docs/tenants.md).
 *
 * `jobs.admission` is NULL for a job of a tenant without max_running_jobs (the fast path: enqueued
 * at once, never counted), 'held' while such a job waits in PostgreSQL for a slot (not in BullMQ),
 * and 'admitted' once it has a slot: an admitted job that is queued or running holds the slot
 * until it ends, so a tenant's slots are counted from PostgreSQL and a crash leaks none.
 *
 * A trigger before every INSERT sets `admission` and enforces max_queued_jobs: it locks the tenant
 * row (FOR NO KEY UPDATE: job inserts' foreign-key checks are not blocked) until the inserting
 * transaction ends, so two submissions of one tenant cannot both take the last place. A refusal is
 * SQLSTATE HQ429, which the API answers with 429 TENANT_QUEUE_FULL.
 */
export class TenantLimits1796700000000 implements MigrationInterface {
  name = 'TenantLimits1796700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE jobs ADD COLUMN admission text CHECK (admission IN ('held', 'admitted'))`,
    );
    // The next held jobs of a tenant, in the order BullMQ would run them: by priority (absent
    // last), then oldest first.
    await queryRunner.query(
      `CREATE INDEX jobs_tenant_held_idx ON jobs (tenant_id, ((options ->> 'priority')::int), created_at, id)
        WHERE admission = 'held' AND status = 'queued'`,
    );
    // The slots a tenant uses.
    await queryRunner.query(
      `CREATE INDEX jobs_tenant_admitted_idx ON jobs (tenant_id)
        WHERE admission = 'admitted' AND status IN ('queued', 'running')`,
    );
    // max_queued_jobs: the tenant's queued jobs, counted up to the limit.
    await queryRunner.query(
      `CREATE INDEX jobs_tenant_queued_idx ON jobs (tenant_id) WHERE status = 'queued'`,
    );
    await queryRunner.query(`
      CREATE FUNCTION jobs_tenant_limits() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        running_limit int;
        queued_limit int;
      BEGIN
        IF NEW.status <> 'queued' THEN
          RETURN NEW;
        END IF;
        SELECT max_running_jobs, max_queued_jobs INTO running_limit, queued_limit
          FROM tenants WHERE id = NEW.tenant_id;
        IF running_limit IS NOT NULL THEN
          NEW.admission := 'held';
        END IF;
        IF queued_limit IS NULL THEN
          RETURN NEW;
        END IF;
        -- One submission of the tenant at a time from here to its commit: the count below sees
        -- every job committed before (each statement of a function takes a fresh snapshot).
        PERFORM 1 FROM tenants WHERE id = NEW.tenant_id FOR NO KEY UPDATE;
        IF NEW.idempotency_key IS NOT NULL AND EXISTS (
             SELECT 1 FROM jobs WHERE tenant_id = NEW.tenant_id AND idempotency_key = NEW.idempotency_key) THEN
          RETURN NEW; -- a replay: ON CONFLICT answers with the job that exists
        END IF;
        IF (SELECT count(*) FROM (SELECT 1 FROM jobs WHERE tenant_id = NEW.tenant_id AND status = 'queued'
                                   LIMIT queued_limit) AS queued) >= queued_limit THEN
          RAISE EXCEPTION 'tenant % has % queued jobs (max_queued_jobs)', NEW.tenant_id, queued_limit
            USING ERRCODE = 'HQ429';
        END IF;
        RETURN NEW;
      END $$`);
    await queryRunner.query(
      `CREATE TRIGGER jobs_tenant_limits BEFORE INSERT ON jobs
        FOR EACH ROW EXECUTE FUNCTION jobs_tenant_limits()`,
    );
    // A held job never runs, whatever put it in BullMQ (an enqueue that skipped admission, an older
    // API during an upgrade): its lease UPDATE skips the row, the worker finds nothing to do, and
    // the job runs once admitted. The WHEN clause spares every other update the function call.
    await queryRunner.query(`
      CREATE FUNCTION jobs_held_not_leased() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RETURN NULL;
      END $$`);
    await queryRunner.query(
      `CREATE TRIGGER jobs_held_not_leased BEFORE UPDATE ON jobs
        FOR EACH ROW WHEN (NEW.admission = 'held' AND NEW.status = 'running')
        EXECUTE FUNCTION jobs_held_not_leased()`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER jobs_held_not_leased ON jobs`);
    await queryRunner.query(`DROP FUNCTION jobs_held_not_leased()`);
    await queryRunner.query(`DROP TRIGGER jobs_tenant_limits ON jobs`);
    await queryRunner.query(`DROP FUNCTION jobs_tenant_limits()`);
    await queryRunner.query(`DROP INDEX jobs_tenant_queued_idx`);
    await queryRunner.query(`DROP INDEX jobs_tenant_admitted_idx`);
    await queryRunner.query(`DROP INDEX jobs_tenant_held_idx`);
    await queryRunner.query(`ALTER TABLE jobs DROP COLUMN admission`);
  }
}
