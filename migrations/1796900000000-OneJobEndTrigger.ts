import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One trigger, not two, for a job that ends: it deletes the job's hash states (as
 * jobs_end_deletes_states did) and, when the status changed and a batch item waits on the job,
 * settles that item (as jobs_end_settles_batch_item did). Same conditions, same order, same
 * statement; cheaper per ended job: one PL/pgSQL call instead of three (the settle trigger called
 * batch_item_settle for every job, batch or not), no EXECUTE parsed and planned at every row, and
 * no search_path switched per call. The schema is written into the function when it is made (the
 * batch functions pin it too, with SET search_path FROM CURRENT).
 */
export class OneJobEndTrigger1796900000000 implements MigrationInterface {
  name = 'OneJobEndTrigger1796900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const [{ schema }] = (await queryRunner.query(
      `SELECT quote_ident(current_schema()) AS schema`,
    )) as { schema: string }[];
    await queryRunner.query(`DROP TRIGGER jobs_end_deletes_states ON jobs`);
    await queryRunner.query(`DROP FUNCTION job_states_delete_ended()`);
    await queryRunner.query(`DROP TRIGGER jobs_end_settles_batch_item ON jobs`);
    await queryRunner.query(`DROP FUNCTION batch_items_job_ended()`);
    await queryRunner.query(`
      CREATE FUNCTION jobs_ended() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM ${schema}.job_states WHERE job_id = NEW.id;
        IF OLD.status IS DISTINCT FROM NEW.status AND EXISTS (
             SELECT 1 FROM ${schema}.batch_items WHERE job_id = NEW.id AND status = 'queued') THEN
          PERFORM ${schema}.batch_item_settle(NEW.id);
        END IF;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER jobs_ended AFTER UPDATE OF status ON jobs
        FOR EACH ROW WHEN (NEW.status IN ('succeeded', 'failed', 'canceled'))
        EXECUTE FUNCTION jobs_ended()`);
  }

  /** The two triggers as migrations 1796300000000 and 1796800000000 made them. */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER jobs_ended ON jobs`);
    await queryRunner.query(`DROP FUNCTION jobs_ended()`);
    await queryRunner.query(`
      CREATE FUNCTION job_states_delete_ended() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        EXECUTE format('DELETE FROM %I.job_states WHERE job_id = $1', TG_TABLE_SCHEMA) USING NEW.id;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER jobs_end_deletes_states AFTER UPDATE OF status ON jobs
        FOR EACH ROW WHEN (NEW.status IN ('succeeded', 'failed', 'canceled'))
        EXECUTE FUNCTION job_states_delete_ended()`);
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
}
