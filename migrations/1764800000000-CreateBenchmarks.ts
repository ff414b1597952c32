import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Benchmark runs (issue 5): a run per request or CLI --save, one result row per
 * algorithm × implementation × message length (NULL length: the long-message slope). */
export class CreateBenchmarks1764800000000 implements MigrationInterface {
  name = 'CreateBenchmarks1764800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE benchmark_runs (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        status text NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
        arch text NOT NULL,
        request jsonb NOT NULL DEFAULT '{}',
        cpu_model text,
        machine jsonb,
        settings jsonb,
        report jsonb,
        error_message text,
        created_at timestamptz NOT NULL DEFAULT now(),
        started_at timestamptz,
        finished_at timestamptz
      )`);
    await queryRunner.query(
      `CREATE INDEX benchmark_runs_created_at_idx ON benchmark_runs (created_at DESC, id DESC)`,
    );
    await queryRunner.query(`
      CREATE TABLE benchmark_results (
        run_id uuid NOT NULL REFERENCES benchmark_runs (id) ON DELETE CASCADE,
        algorithm text NOT NULL,
        provider text NOT NULL,
        implementation text NOT NULL,
        length int,
        q1 double precision NOT NULL,
        median double precision NOT NULL,
        q3 double precision NOT NULL,
        spread boolean NOT NULL
      )`);
    await queryRunner.query(
      `CREATE INDEX benchmark_results_run_idx ON benchmark_results (run_id, algorithm, length)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE benchmark_results`);
    await queryRunner.query(`DROP TABLE benchmark_runs`);
  }
}
