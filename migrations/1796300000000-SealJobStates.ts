import { jobStateBinding, type StateBinding, type StateSealer } from '@hashq/crypto';
import type { MigrationInterface, QueryRunner } from 'typeorm';

type JobStateRow = {
  job_id: string;
  algorithm: string;
  state: Buffer;
  checkpoint_offset: string;
  fence: string;
};

/**
 * Hash states sealed at rest (issue 15) and deleted when their job ends.
 * - jobs.checkpoint_fence: the fence of the lease that wrote the checkpoint; with the offset it is
 *   part of what each sealed state is bound to (see CheckpointStore).
 * - A trigger deletes a job's states in the very statement that ends it (succeeded, failed,
 *   canceled), whichever code ends it: the API's cancel, the reconciler, the worker. Unlike a
 *   DELETE beside each UPDATE, its DELETE runs once the row is locked, with a fresh snapshot, so it
 *   also removes states that a checkpoint committed while the ending statement waited for the row.
 * - States of finished jobs go; those of unfinished jobs are sealed in place. That needs a key:
 *   without HASHQ_STATE_KEYS the migration refuses (nothing is left in plaintext).
 * A class per sealer, since TypeORM instantiates migrations itself (`new`).
 */
export function sealJobStatesMigration(
  sealer: StateSealer | undefined,
): new () => MigrationInterface {
  return class SealJobStates1796300000000 implements MigrationInterface {
    name = 'SealJobStates1796300000000';

    async up(queryRunner: QueryRunner): Promise<void> {
      await queryRunner.query(`ALTER TABLE jobs ADD COLUMN checkpoint_fence bigint`);
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
        DELETE FROM job_states s USING jobs j
         WHERE j.id = s.job_id AND j.status IN ('succeeded', 'failed', 'canceled')`);
      await queryRunner.query(
        `UPDATE jobs SET checkpoint_fence = fence WHERE id IN (SELECT job_id FROM job_states)`,
      );
      const rows = await this.states(queryRunner, 'fence');
      if (rows.length === 0) return;
      const what = `job_states holds ${rows.length} plaintext hash state(s) of unfinished jobs to seal`;
      const keys = requireSealer(sealer, what);
      await this.rewrite(queryRunner, rows, (state, binding) => keys.seal(state, binding));
    }

    async down(queryRunner: QueryRunner): Promise<void> {
      const rows = await this.states(queryRunner, 'checkpoint_fence');
      if (rows.length > 0) {
        const keys = requireSealer(
          sealer,
          `job_states holds ${rows.length} sealed hash state(s) to open`,
        );
        await this.rewrite(queryRunner, rows, (state, binding) => keys.open(state, binding));
      }
      await queryRunner.query(`DROP TRIGGER jobs_end_deletes_states ON jobs`);
      await queryRunner.query(`DROP FUNCTION job_states_delete_ended()`);
      await queryRunner.query(`ALTER TABLE jobs DROP COLUMN checkpoint_fence`);
    }

    /** Every state with its job's checkpoint offset and the fence its binding uses. */
    private states(
      queryRunner: QueryRunner,
      fence: 'fence' | 'checkpoint_fence',
    ): Promise<JobStateRow[]> {
      return queryRunner.query(
        `SELECT s.job_id, s.algorithm, s.state, j.checkpoint_offset, j.${fence} AS fence
           FROM job_states s JOIN jobs j ON j.id = s.job_id ORDER BY s.job_id, s.algorithm`,
      );
    }

    /** Replaces each state by `change` of it, given the binding of its row (seal or open). */
    private async rewrite(
      queryRunner: QueryRunner,
      rows: JobStateRow[],
      change: (state: Buffer, binding: StateBinding) => Buffer,
    ): Promise<void> {
      for (const row of rows) {
        const binding = jobStateBinding(
          row.job_id,
          row.algorithm,
          Number(row.checkpoint_offset),
          Number(row.fence),
        );
        await queryRunner.query(
          `UPDATE job_states SET state = $3 WHERE job_id = $1 AND algorithm = $2`,
          [row.job_id, row.algorithm, change(row.state, binding)],
        );
      }
    }
  };
}

export function requireSealer(sealer: StateSealer | undefined, what: string): StateSealer {
  if (sealer) return sealer;
  throw new Error(
    `${what}, which needs HASHQ_STATE_KEYS: set it and run the migration again (nothing was changed)`,
  );
}
