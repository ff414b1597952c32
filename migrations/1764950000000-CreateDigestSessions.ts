import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Digest sessions (issue 16): uploads over the tus protocol, hashed as they arrive. Only the
 * serialized hash states are kept between requests (never the data); upload_offset is the fence
 * of every write (`WHERE upload_offset = <old>`).
 */
export class CreateDigestSessions1764950000000 implements MigrationInterface {
  name = 'CreateDigestSessions1764950000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE digest_sessions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        status text NOT NULL DEFAULT 'uploading' CHECK (status IN ('uploading', 'succeeded', 'failed', 'expired')),
        algorithms text[] NOT NULL,
        options jsonb NOT NULL DEFAULT '{}',
        upload_metadata text,
        upload_length bigint CHECK (upload_length >= 0),
        upload_offset bigint NOT NULL DEFAULT 0 CHECK (upload_offset >= 0),
        states bytea[],
        digests jsonb,
        error_code text,
        error_message text,
        error_details jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        finished_at timestamptz
      )`);
    await queryRunner.query(
      `CREATE INDEX digest_sessions_expires_at_idx ON digest_sessions (expires_at)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE digest_sessions`);
  }
}
