import { sessionStateBinding, type StateBinding, type StateSealer } from '@hashq/crypto';
import type { MigrationInterface, QueryRunner } from 'typeorm';

import { requireSealer } from './1796300000000-SealJobStates';

type SessionStatesRow = {
  id: string;
  algorithms: string[];
  states: Buffer[];
  upload_offset: string;
};

/**
 * Digest-session states sealed at rest, as job states are (SealJobStates): each one bound to its
 * session, algorithm and upload offset (see DigestSessionsRepository).
 * - Sessions that are no longer uploading keep no states (finishing and the expiry sweep already
 *   clear them; any left over go).
 * - The states of uploading sessions are sealed in place. That needs a key: without
 *   HASHQ_STATE_KEYS the migration refuses (nothing is left in plaintext).
 * A class per sealer, since TypeORM instantiates migrations itself (`new`).
 */
export function sealSessionStatesMigration(
  sealer: StateSealer | undefined,
): new () => MigrationInterface {
  return class SealSessionStates1796400000000 implements MigrationInterface {
    name = 'SealSessionStates1796400000000';

    async up(queryRunner: QueryRunner): Promise<void> {
      await queryRunner.query(
        `UPDATE digest_sessions SET states = NULL WHERE status <> 'uploading'`,
      );
      await this.rewrite(
        queryRunner,
        'plaintext hash states of uploading sessions to seal',
        (keys, state, binding) => keys.seal(state, binding),
      );
    }

    async down(queryRunner: QueryRunner): Promise<void> {
      await this.rewrite(queryRunner, 'sealed hash states to open', (keys, state, binding) =>
        keys.open(state, binding),
      );
    }

    /** Every stored state through `convert`; refuses before changing anything when there is no key. */
    private async rewrite(
      queryRunner: QueryRunner,
      what: string,
      convert: (keys: StateSealer, state: Buffer, binding: StateBinding) => Buffer,
    ): Promise<void> {
      const rows: SessionStatesRow[] = await queryRunner.query(
        `SELECT id, algorithms, states, upload_offset FROM digest_sessions WHERE states IS NOT NULL ORDER BY id`,
      );
      if (rows.length === 0) return;
      const keys = requireSealer(
        sealer,
        `digest_sessions holds ${rows.length} session(s) with ${what}`,
      );
      for (const row of rows) {
        const states = row.states.map((state, i) =>
          convert(
            keys,
            state,
            sessionStateBinding(row.id, row.algorithms[i], Number(row.upload_offset)),
          ),
        );
        await queryRunner.query(`UPDATE digest_sessions SET states = $2 WHERE id = $1`, [
          row.id,
          states,
        ]);
      }
    }
  };
}
