import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Benchmark admission (issue 12): benchmark_workers holds, per CPU architecture, when a worker
 * last reported (a run for an architecture without one is refused or expired), and a failed run
 * gets a stable error code beside its message.
 */
export class BenchmarkWorkers1764900000000 implements MigrationInterface {
  name = 'BenchmarkWorkers1764900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE benchmark_runs ADD COLUMN error_code text`);
    await queryRunner.query(
      `CREATE INDEX benchmark_runs_active_idx ON benchmark_runs (arch) WHERE status IN ('queued', 'running')`,
    );
    await queryRunner.query(`
      CREATE TABLE benchmark_workers (
        arch text PRIMARY KEY,
        seen_at timestamptz NOT NULL
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE benchmark_workers`);
    await queryRunner.query(`DROP INDEX benchmark_runs_active_idx`);
    await queryRunner.query(`ALTER TABLE benchmark_runs DROP COLUMN error_code`);
  }
}
