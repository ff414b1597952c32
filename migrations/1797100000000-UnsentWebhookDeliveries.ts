import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The deliveries of one resource whose body is not made yet: a digest session deleted before its
 * `session.completed` was first sent has the body made from the row in the DELETE
 * (webhook-deliverer.service.ts), found by this index. Partial: a body is made at the first
 * attempt, so the index holds only the deliveries still waiting for it.
 */
export class UnsentWebhookDeliveries1797100000000 implements MigrationInterface {
  name = 'UnsentWebhookDeliveries1797100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX webhook_deliveries_unsent_idx ON webhook_deliveries (resource_id) WHERE payload IS NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX webhook_deliveries_unsent_idx`);
  }
}
