import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Batches (issue 14): one request that hashes or verifies every object of a directory, an S3
 * prefix, a manifest or a SUM file. A batch row carries the listing's checkpoint (cursor, fence,
 * lease) so a crashed listing continues where it stopped; every listed object is one batch_items
 * row, written in bulk with the cursor that produced it, so each object has exactly one row and
 * one result. Counters are never stored: they are counted from the item rows, so nothing can be
 * counted twice.
 *
 * Small items are hashed in groups (grp: the listing page they came from); big ones run as
 * ordinary jobs (batch_items.job_id). A trigger copies a big item's job outcome to its row in the
 * statement that ends the job, whichever code ends it (worker, reconciler, cancel), and
 * batch_try_finish() ends the batch once no item is left, under the batch row's lock so two
 * concurrent last items cannot both miss each other.
 */
export class CreateBatches1796800000000 implements MigrationInterface {
  name = 'CreateBatches1796800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE batches (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id text NOT NULL DEFAULT 'default' REFERENCES tenants (id),
        status text NOT NULL CHECK (status IN
          ('queued', 'running', 'succeeded', 'completed_with_failures', 'failed', 'canceled')),
        source jsonb NOT NULL,
        manifest text,
        algorithms text[] NOT NULL,
        options jsonb NOT NULL DEFAULT '{}',
        idempotency_key text,
        request_hash text,
        fence bigint NOT NULL DEFAULT 0,
        lease_owner text,
        lease_expires_at timestamptz,
        list_cursor text,
        listed_items bigint NOT NULL DEFAULT 0,
        listed_bytes bigint NOT NULL DEFAULT 0,
        listing_done boolean NOT NULL DEFAULT false,
        dispatch_round int NOT NULL DEFAULT 0,
        error_code text,
        error_message text,
        error_details jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        started_at timestamptz,
        finished_at timestamptz,
        CONSTRAINT batches_tenant_idempotency_key_key UNIQUE (tenant_id, idempotency_key)
      )`);
    await queryRunner.query(
      `CREATE INDEX batches_tenant_created_at_id_idx ON batches (tenant_id, created_at DESC, id DESC)`,
    );
    await queryRunner.query(
      `CREATE INDEX batches_active_idx ON batches (created_at) WHERE status IN ('queued', 'running')`,
    );
    await queryRunner.query(`
      CREATE TABLE batch_items (
        batch_id uuid NOT NULL REFERENCES batches (id) ON DELETE CASCADE,
        seq bigint NOT NULL,
        grp bigint NOT NULL,
        name text NOT NULL,
        source jsonb NOT NULL,
        size bigint,
        version jsonb,
        expected jsonb,
        line bigint,
        status text NOT NULL CHECK (status IN
          ('pending', 'queued', 'succeeded', 'failed', 'mismatch', 'canceled')),
        job_id uuid REFERENCES jobs (id) ON DELETE SET NULL,
        digests jsonb,
        error_code text,
        error_message text,
        finished_at timestamptz,
        PRIMARY KEY (batch_id, seq)
      )`);
    await queryRunner.query(
      `CREATE INDEX batch_items_pending_idx ON batch_items (batch_id, grp) WHERE status = 'pending'`,
    );
    await queryRunner.query(
      `CREATE INDEX batch_items_status_idx ON batch_items (batch_id, status, seq)`,
    );
    await queryRunner.query(
      `CREATE INDEX batch_items_job_idx ON batch_items (job_id) WHERE job_id IS NOT NULL`,
    );
    // Functions keep the schema the migration ran in, whatever the caller's search_path.
    await queryRunner.query(`
      CREATE FUNCTION batch_try_finish(batch uuid) RETURNS text LANGUAGE plpgsql
      SET search_path FROM CURRENT AS $$
      DECLARE
        ended text;
      BEGIN
        PERFORM 1 FROM batches WHERE id = batch AND status = 'running' AND listing_done FOR UPDATE;
        IF NOT FOUND THEN RETURN NULL; END IF;
        -- a fresh snapshot now that the row is ours: items other transactions ended are visible
        UPDATE batches
           SET status = CASE WHEN EXISTS (SELECT 1 FROM batch_items
                                           WHERE batch_id = batch
                                             AND status IN ('failed', 'mismatch', 'canceled'))
                             THEN 'completed_with_failures' ELSE 'succeeded' END,
               finished_at = now(), updated_at = now(), lease_owner = NULL, lease_expires_at = NULL
         WHERE id = batch
           AND NOT EXISTS (SELECT 1 FROM batch_items
                            WHERE batch_id = batch AND status IN ('pending', 'queued'))
        RETURNING status INTO ended;
        RETURN ended;
      END $$`);
    // A big item's row takes the outcome of its job once the job has ended (called by the trigger,
    // and by the worker when it links an item to a job that may have ended already).
    await queryRunner.query(`
      CREATE FUNCTION batch_item_settle(job uuid) RETURNS void LANGUAGE plpgsql
      SET search_path FROM CURRENT AS $$
      DECLARE
        batch uuid;
      BEGIN
        UPDATE batch_items i
           SET status = CASE WHEN j.status = 'succeeded' THEN 'succeeded'
                             WHEN j.status = 'canceled' THEN 'canceled'
                             WHEN j.error_code = 'DIGEST_MISMATCH' THEN 'mismatch'
                             ELSE 'failed' END,
               digests = (SELECT jsonb_object_agg(d.key, d.value ->> 'hex')
                            FROM jsonb_each(coalesce(j.digests, '{}')) d),
               error_code = j.error_code, error_message = j.error_message,
               size = coalesce(j.total_bytes, i.size), finished_at = now()
          FROM jobs j
         WHERE j.id = job AND j.status IN ('succeeded', 'failed', 'canceled')
           AND i.job_id = j.id AND i.status = 'queued'
        RETURNING i.batch_id INTO batch;
        IF batch IS NOT NULL THEN PERFORM batch_try_finish(batch); END IF;
      END $$`);
    await queryRunner.query(`
      CREATE FUNCTION batch_items_job_ended() RETURNS trigger LANGUAGE plpgsql
      SET search_path FROM CURRENT AS $$
      BEGIN
        PERFORM batch_item_settle(NEW.id);
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER jobs_end_settles_batch_item AFTER UPDATE OF status ON jobs
        FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status
                           AND NEW.status IN ('succeeded', 'failed', 'canceled'))
        EXECUTE FUNCTION batch_items_job_ended()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER jobs_end_settles_batch_item ON jobs`);
    await queryRunner.query(`DROP FUNCTION batch_items_job_ended()`);
    await queryRunner.query(`DROP FUNCTION batch_item_settle(uuid)`);
    await queryRunner.query(`DROP FUNCTION batch_try_finish(uuid)`);
    await queryRunner.query(`DROP TABLE batch_items`);
    await queryRunner.query(`DROP TABLE batches`);
  }
}
