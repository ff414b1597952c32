import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The tables whose end is an event, its type, and the statuses that end a row of it. A job's end
 * queues its event in jobs_ended, the trigger function every ended job already calls (one
 * PL/pgSQL call per job, not two: see migration 1796900000000).
 */
const EVENTS = [
  {
    table: 'batches',
    type: 'batch.completed',
    ended: ['succeeded', 'completed_with_failures', 'failed', 'canceled'],
  },
  { table: 'digest_sessions', type: 'session.completed', ended: ['succeeded', 'failed'] },
];

/** jobs_ended (migration 1796900000000) with, or without, the queueing of job.completed. */
const JOBS_ENDED = (schema: string, webhooks: boolean) => `
  CREATE OR REPLACE FUNCTION jobs_ended() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    DELETE FROM ${schema}.job_states WHERE job_id = NEW.id;
    IF OLD.status IS DISTINCT FROM NEW.status THEN
      IF EXISTS (SELECT 1 FROM ${schema}.batch_items WHERE job_id = NEW.id AND status = 'queued') THEN
        PERFORM ${schema}.batch_item_settle(NEW.id);
      END IF;${
        webhooks
          ? `
      INSERT INTO ${schema}.webhook_deliveries (endpoint_id, type, resource_id)
        SELECT e.id, 'job.completed', NEW.id FROM ${schema}.webhook_endpoints e
         WHERE e.tenant_id = NEW.tenant_id AND 'job.completed' = ANY (e.events);`
          : ''
      }
    END IF;
    RETURN NULL;
  END $$`;

/**
 * Webhooks (README "Webhooks"): a tenant's endpoints, and an outbox of deliveries. A row that
 * ends (a job, a batch, a digest session) queues one delivery per endpoint of its tenant that asks
 * for the event, in the transaction that ends it (a trigger), so an event is never lost between
 * the end and a delivery and is never queued for an end that rolled back. The API's deliverer
 * sends them (webhook-deliverer.service.ts). A tenant without endpoints pays one index probe per
 * ended row.
 */
export class CreateWebhooks1797000000000 implements MigrationInterface {
  name = 'CreateWebhooks1797000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const [{ schema }] = (await queryRunner.query(
      `SELECT quote_ident(current_schema()) AS schema`,
    )) as { schema: string }[];
    await queryRunner.query(`
      CREATE TABLE webhook_endpoints (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id text NOT NULL REFERENCES tenants (id),
        url text NOT NULL,
        events text[] NOT NULL,
        secret bytea NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE INDEX webhook_endpoints_tenant_idx ON webhook_endpoints (tenant_id)`,
    );
    await queryRunner.query(`
      CREATE TABLE webhook_deliveries (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
        type text NOT NULL,
        resource_id uuid NOT NULL,
        payload text,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
        attempts int NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        last_status int,
        last_error text,
        created_at timestamptz NOT NULL DEFAULT now(),
        delivered_at timestamptz
      )`);
    await queryRunner.query(
      `CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`,
    );
    await queryRunner.query(
      `CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, created_at DESC)`,
    );
    await queryRunner.query(
      `CREATE INDEX webhook_deliveries_done_idx ON webhook_deliveries (created_at) WHERE status <> 'pending'`,
    );
    await queryRunner.query(`
      CREATE FUNCTION webhook_event() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO ${schema}.webhook_deliveries (endpoint_id, type, resource_id)
          SELECT e.id, TG_ARGV[0], NEW.id FROM ${schema}.webhook_endpoints e
           WHERE e.tenant_id = NEW.tenant_id AND TG_ARGV[0] = ANY (e.events);
        RETURN NULL;
      END $$`);
    await queryRunner.query(JOBS_ENDED(schema, true));
    for (const { table, type, ended } of EVENTS) {
      const statuses = ended.map((status) => `'${status}'`).join(', ');
      await queryRunner.query(`
        CREATE TRIGGER ${table}_webhook_event AFTER UPDATE OF status ON ${table}
          FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status AND NEW.status IN (${statuses}))
          EXECUTE FUNCTION webhook_event('${type}')`);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const { table } of EVENTS) {
      await queryRunner.query(`DROP TRIGGER ${table}_webhook_event ON ${table}`);
    }
    await queryRunner.query(`DROP FUNCTION webhook_event()`);
    const [{ schema }] = (await queryRunner.query(
      `SELECT quote_ident(current_schema()) AS schema`,
    )) as { schema: string }[];
    await queryRunner.query(JOBS_ENDED(schema, false)); // as migration 1796900000000 made it
    await queryRunner.query(`DROP TABLE webhook_deliveries`);
    await queryRunner.query(`DROP TABLE webhook_endpoints`);
  }
}
