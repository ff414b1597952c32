import { randomUUID } from 'node:crypto';

import { SealedStateError, sessionStateBinding, StateSealer } from '@hashq/crypto';
import type { DigestValue } from '@hashq/jobs';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

export type DigestSessionStatus = 'uploading' | 'succeeded' | 'failed' | 'expired';

/** Hashing options of a session, as stored in digest_sessions.options. */
export interface DigestSessionOptions {
  outputLength?: number;
  customization?: string;
  expected?: Record<string, string>;
}

export interface SessionError {
  code: string;
  message: string;
  details: unknown;
}

export interface DigestSessionRow {
  id: string;
  status: DigestSessionStatus;
  algorithms: string[];
  options: DigestSessionOptions;
  uploadMetadata: string | null;
  uploadLength: number | null;
  uploadOffset: number;
  /** One sealed state per algorithm, in the order of `algorithms` (see openStates); null once finished. */
  states: Buffer[] | null;
  digests: Record<string, DigestValue> | null;
  error: SessionError | null;
  createdAt: Date;
  updatedAt: Date;
  expiresAt: Date;
  finishedAt: Date | null;
  /** expires_at has passed by PostgreSQL's clock (the one clock every API instance shares). */
  expired: boolean;
}

export interface NewDigestSession {
  tenantId: string;
  algorithms: string[];
  options: DigestSessionOptions;
  uploadMetadata: string | null;
  uploadLength: number | null;
  /** Serialized states, in the order of `algorithms`: sealed before they are written. */
  states: Buffer[];
  idleSeconds: number;
}

/** What a fenced write moves the session to. */
export interface SessionProgress {
  offset: number;
  /** Set with a deferred length's first Upload-Length (ignored once the length is known). */
  length: number | null;
  /** Serialized states at `offset`, in the order of the session's algorithms: sealed before they are written. */
  states: Buffer[];
  idleSeconds: number;
}

export interface SessionOutcome {
  offset: number;
  length: number;
  status: 'succeeded' | 'failed';
  digests: Record<string, DigestValue>;
  error: SessionError | null;
  idleSeconds: number;
}

interface Row {
  id: string;
  status: DigestSessionStatus;
  algorithms: string[];
  options: DigestSessionOptions;
  upload_metadata: string | null;
  upload_length: string | null;
  upload_offset: string;
  states: Buffer[] | null;
  digests: Record<string, DigestValue> | null;
  error_code: string | null;
  error_message: string | null;
  error_details: unknown;
  created_at: Date;
  updated_at: Date;
  expires_at: Date;
  finished_at: Date | null;
  expired: boolean;
}

const COLUMNS = `*, expires_at <= now() AS expired`;
/** A write lands only on a live session still at the offset the writer started from. */
const FENCE = `id = $1 AND upload_offset = $2 AND status = 'uploading' AND expires_at > now()`;

function toSession(row: Row): DigestSessionRow {
  return {
    id: row.id,
    status: row.status,
    algorithms: row.algorithms,
    options: row.options,
    uploadMetadata: row.upload_metadata,
    uploadLength: row.upload_length === null ? null : Number(row.upload_length),
    uploadOffset: Number(row.upload_offset),
    states: row.states,
    digests: row.digests && inOrder(row.algorithms, row.digests),
    error: row.error_code
      ? { code: row.error_code, message: row.error_message ?? '', details: row.error_details }
      : null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    expiresAt: row.expires_at,
    finishedAt: row.finished_at,
    expired: row.expired,
  };
}

/** The digests in the order the session named its algorithms (jsonb keeps its own key order). */
function inOrder(
  algorithms: string[],
  digests: Record<string, DigestValue>,
): Record<string, DigestValue> {
  return Object.fromEntries(
    algorithms.filter((name) => digests[name]).map((name) => [name, digests[name]]),
  );
}

/** TypeORM returns [rows, count] for UPDATE ... RETURNING on PostgreSQL. */
function updatedRows<T>(result: T[] | [T[], number]): T[] {
  if (result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number')
    return result[0] as T[];
  return result as T[];
}

/**
 * Owns the digest_sessions table. Every write after the creation is one UPDATE fenced on the
 * offset its writer read, so of two writers that started from the same offset exactly one lands;
 * the hash states and the offset they belong to always change together.
 *
 * The states are sealed (StateSealer) before they are written, each bound to the session, its
 * algorithm and the offset written with it: a state opens only in its own session's row at its
 * own offset (openStates).
 */
@Injectable()
export class DigestSessionsRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly sealer: StateSealer,
  ) {}

  async insert(session: NewDigestSession): Promise<DigestSessionRow> {
    const id = randomUUID(); // chosen here: the sealed states are bound to it
    const rows: Row[] = await this.dataSource.query(
      `INSERT INTO digest_sessions (id, algorithms, options, upload_metadata, upload_length, states, expires_at, tenant_id)
       VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7), $8)
       RETURNING ${COLUMNS}`,
      [
        id,
        session.algorithms,
        JSON.stringify(session.options),
        session.uploadMetadata,
        session.uploadLength,
        this.seal(id, session.algorithms, 0, session.states),
        session.idleSeconds,
        session.tenantId,
      ],
    );
    return toSession(rows[0]);
  }

  /** The session (only if it is `tenantId`'s, when given). */
  async findById(id: string, tenantId: string | null = null): Promise<DigestSessionRow | null> {
    const rows: Row[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM digest_sessions WHERE id = $1 AND ($2::text IS NULL OR tenant_id = $2)`,
      [id, tenantId],
    );
    return rows.length === 1 ? toSession(rows[0]) : null;
  }

  /**
   * The session's states, opened. SealedStateError (STATE_INVALID) when one is missing or does not
   * open with its binding: altered, copied from another session or offset, or sealed with a key
   * HASHQ_STATE_KEYS no longer lists.
   */
  openStates(session: DigestSessionRow): Buffer[] {
    const { id, algorithms, states, uploadOffset } = session;
    if (states?.length !== algorithms.length) {
      const held = states?.length ?? 0;
      throw new SealedStateError(
        `digest session ${id} holds ${held} states for ${algorithms.length} algorithms`,
      );
    }
    return algorithms.map((name, i) =>
      this.sealer.open(states[i], sessionStateBinding(id, name, uploadOffset)),
    );
  }

  /** Commits hashed bytes: the new states and offset, fenced on `from`. The new expiry, or null when fenced off. */
  async advance(
    session: DigestSessionRow,
    from: number,
    to: SessionProgress,
  ): Promise<Date | null> {
    const rows = updatedRows<{ expires_at: Date }>(
      await this.dataSource.query(
        `UPDATE digest_sessions
            SET upload_offset = $3, upload_length = coalesce(upload_length, $4), states = $5,
                updated_at = now(), expires_at = now() + make_interval(secs => $6)
          WHERE ${FENCE}
          RETURNING expires_at`,
        [
          session.id,
          from,
          to.offset,
          to.length,
          this.seal(session.id, session.algorithms, to.offset, to.states),
          to.idleSeconds,
        ],
      ),
    );
    return rows[0]?.expires_at ?? null;
  }

  /** Ends the session at its full length: digests (and a mismatch) replace the states, fenced on `from`. */
  async finish(
    id: string,
    from: number,
    outcome: SessionOutcome,
  ): Promise<DigestSessionRow | null> {
    const rows = updatedRows<Row>(
      await this.dataSource.query(
        `UPDATE digest_sessions
            SET upload_offset = $3, upload_length = $4, status = $5, digests = $6,
                error_code = $7, error_message = $8, error_details = $9, states = NULL,
                updated_at = now(), finished_at = now(), expires_at = now() + make_interval(secs => $10)
          WHERE ${FENCE}
          RETURNING ${COLUMNS}`,
        [
          id,
          from,
          outcome.offset,
          outcome.length,
          outcome.status,
          JSON.stringify(outcome.digests),
          outcome.error?.code ?? null,
          outcome.error?.message ?? null,
          outcome.error ? JSON.stringify(outcome.error.details) : null,
          outcome.idleSeconds,
        ],
      ),
    );
    return rows.length === 1 ? toSession(rows[0]) : null;
  }

  /** Ends the session 'failed' where it stands, its states gone (they did not open), fenced on `from`. */
  async fail(id: string, from: number, error: SessionError, idleSeconds: number): Promise<boolean> {
    const rows = updatedRows<{ id: string }>(
      await this.dataSource.query(
        `UPDATE digest_sessions
            SET status = 'failed', error_code = $3, error_message = $4, error_details = $5, states = NULL,
                updated_at = now(), finished_at = now(), expires_at = now() + make_interval(secs => $6)
          WHERE ${FENCE}
          RETURNING id`,
        [id, from, error.code, error.message, JSON.stringify(error.details), idleSeconds],
      ),
    );
    return rows.length === 1;
  }

  /** tus termination: the row and its states go at once. False when there was no such session. */
  async delete(id: string): Promise<boolean> {
    const rows = updatedRows<{ id: string }>(
      await this.dataSource.query(`DELETE FROM digest_sessions WHERE id = $1 RETURNING id`, [id]),
    );
    return rows.length === 1;
  }

  /**
   * The cleanup: sessions past their expiry lose their states and digests and stay as 'expired'
   * (410) for `idleSeconds` more; then the row goes too (404). Returns how many of each.
   */
  async sweepExpired(idleSeconds: number): Promise<{ expired: number; deleted: number }> {
    const expired = updatedRows<{ id: string }>(
      await this.dataSource.query(
        `UPDATE digest_sessions SET status = 'expired', states = NULL, digests = NULL, updated_at = now()
          WHERE expires_at <= now() AND status <> 'expired'
          RETURNING id`,
      ),
    );
    const deleted = updatedRows<{ id: string }>(
      await this.dataSource.query(
        `DELETE FROM digest_sessions WHERE expires_at <= now() - make_interval(secs => $1) RETURNING id`,
        [idleSeconds],
      ),
    );
    return { expired: expired.length, deleted: deleted.length };
  }

  private seal(
    id: string,
    algorithms: readonly string[],
    offset: number,
    states: readonly Buffer[],
  ): Buffer[] {
    return states.map((state, i) =>
      this.sealer.seal(state, sessionStateBinding(id, algorithms[i], offset)),
    );
  }
}
