import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The jobs table and the serialized hash states of their last checkpoint (service contract). */
export class CreateJobs1764676800000 implements MigrationInterface {
  name = 'CreateJobs1764676800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE jobs (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        status text NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'canceled')),
        source jsonb NOT NULL,
        algorithms text[] NOT NULL,
        options jsonb NOT NULL DEFAULT '{}',
        idempotency_key text UNIQUE,
        request_hash text,
        fence bigint NOT NULL DEFAULT 0,
        lease_owner text,
        lease_expires_at timestamptz,
        total_bytes bigint,
        bytes_done bigint NOT NULL DEFAULT 0,
        bytes_read bigint NOT NULL DEFAULT 0,
        checkpoint_offset bigint NOT NULL DEFAULT 0,
        source_version jsonb,
        checkpointed_at timestamptz,
        attempts int NOT NULL DEFAULT 0,
        resumes int NOT NULL DEFAULT 0,
        cancel_requested boolean NOT NULL DEFAULT false,
        digests jsonb,
        error_code text,
        error_message text,
        error_details jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        started_at timestamptz,
        finished_at timestamptz
      )`);
    await queryRunner.query(
      `CREATE INDEX jobs_created_at_id_idx ON jobs (created_at DESC, id DESC)`,
    );
    await queryRunner.query(`CREATE INDEX jobs_status_idx ON jobs (status)`);
    await queryRunner.query(`
      CREATE TABLE job_states (
        job_id uuid NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
        algorithm text NOT NULL,
        state bytea NOT NULL,
        PRIMARY KEY (job_id, algorithm)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE job_states`);
    await queryRunner.query(`DROP TABLE jobs`);
  }
}
