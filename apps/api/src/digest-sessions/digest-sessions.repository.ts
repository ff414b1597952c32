import { randomUUID } from 'node:crypto';

import { SealedStateError, sessionStateBinding, StateSealer } from '@hashq/crypto';
import { PreparedStatement, StatementBatcher } from '@hashq/database';
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
  /** The owner (tenants.id). */
  tenantId: string;
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
  tenant_id: string;
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
/** What a write returns: the writer knows every other value (and parsing fewer costs less). */
const STAMPS = `d.id, d.created_at, d.updated_at, d.expires_at, d.finished_at`;
/** A write lands only on a live session still at the offset the writer started from. */
const FENCE = `id = $1 AND upload_offset = $2 AND status = 'uploading' AND expires_at > now()`;
/** Sessions kept in an instance's cache (SessionCache); the oldest go first. */
const CACHED_SESSIONS = 10_000;
/** A cached session this close to its expiry is read again (PostgreSQL's clock decides). */
const CACHE_EXPIRY_MARGIN_MS = 5_000;

/** writeRow's statement: a lone fenced write, prepared once per pooled connection. */
const WRITE_ONE = new PreparedStatement(
  `UPDATE digest_sessions d
      SET upload_offset = $3::bigint, upload_length = coalesce(d.upload_length, $4::bigint),
          status = $5::text, states = CASE WHEN $5::text = 'uploading' THEN $11::bytea[] END,
          digests = $6::jsonb, error_code = $7, error_message = $8,
          error_details = $9::jsonb, updated_at = now(),
          finished_at = CASE WHEN $5::text = 'uploading' THEN NULL ELSE now() END,
          expires_at = now() + make_interval(secs => $10::float8)
    WHERE d.id = $1::uuid AND d.upload_offset = $2::bigint AND d.status = 'uploading'
      AND d.expires_at > now() AND d.states = $12::bytea[]
    RETURNING ${STAMPS}`,
);

/** `(ARRAY[v.s1, …, v.sn])[1:v.n]`: the states of one row of a batch, in slots s1… of `v`. */
const stateArray = (prefix: string, slots: number) =>
  `(ARRAY[${Array.from({ length: slots }, (_, i) => `v.${prefix}${i + 1}`).join(', ')}])[1:v.n]`;
const slotColumns = (prefix: string, slots: number) =>
  Array.from({ length: slots }, (_, i) => `${prefix}${i + 1}`).join(', ');
const slotParams = (first: number, slots: number) =>
  Array.from({ length: slots }, (_, i) => `$${first + i}::bytea[]`).join(', ');

/** The states of the batch's rows as one bytea[] parameter per slot (NULL past a row's count). */
function stateSlots(
  rows: readonly (readonly Buffer[] | null)[],
  slots: number,
): (Buffer | null)[][] {
  return Array.from({ length: slots }, (_, slot) => rows.map((states) => states?.[slot] ?? null));
}

function toSession(row: Row): DigestSessionRow {
  return {
    id: row.id,
    tenantId: row.tenant_id,
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

/** A session as this instance last wrote or read it, with its states opened. */
export interface CachedSession {
  /** Its sealed states included: the fence of the next write. */
  row: DigestSessionRow;
  /** The serialized states, opened: the hashers of the next PATCH restore from them. */
  opened: Buffer[];
}

/** One write of a batch: its row's new values, sealed states included, over the fence. */
interface WriteItem {
  id: string;
  from: number;
  fence: Buffer[];
  offset: number;
  length: number | null;
  sealed: Buffer[] | null;
  status: 'uploading' | 'succeeded' | 'failed';
  digests: Record<string, DigestValue> | null;
  error: SessionError | null;
  idleSeconds: number;
}

/** The timestamps PostgreSQL's clock gave a row it wrote. */
interface Stamps {
  id: string;
  created_at: Date;
  updated_at: Date;
  expires_at: Date;
  finished_at: Date | null;
}

interface InsertItem {
  id: string;
  session: NewDigestSession;
  sealed: Buffer[];
}

/**
 * Owns the digest_sessions table. Every write after the creation is one UPDATE fenced on the
 * offset its writer read and on the states it read (or wrote) there, so of two writers that
 * started from the same offset exactly one lands, and a row changed behind a writer's back (its
 * states replaced) fences it off too; the hash states and the offset they belong to always change
 * together.
 *
 * The states are sealed (StateSealer) before they are written, each bound to the session, its
 * algorithm and the offset written with it: a state opens only in its own session's row at its
 * own offset (openStates).
 *
 * Speed: the reads, inserts and fenced writes of concurrent requests are grouped into one
 * statement each (StatementBatcher: one round trip, one WAL flush for many sessions), and the
 * sessions this instance wrote last are cached with their states opened, so a PATCH that
 * continues where the last one here ended reads nothing; the states in the fence make such a
 * write exactly as safe as one after a read (another instance moved the session, or its row was
 * altered: the fence fails and the caller reads the row).
 */
@Injectable()
export class DigestSessionsRepository {
  private readonly cache = new Map<string, CachedSession>();
  private readonly reads = new StatementBatcher<string, Row | undefined>(
    (ids) => this.readRows(ids),
    (id) => id,
    2,
    500,
  );
  // One insert and one write in flight: what arrives meanwhile goes in the next, larger group
  // (each statement costs PostgreSQL a commit whatever its size; docs/digest-sessions.md).
  private readonly inserts = new StatementBatcher<InsertItem, Stamps>(
    (items) => this.insertRows(items),
    (item) => item.id,
    1,
    500,
  );
  private readonly writes = new StatementBatcher<WriteItem, Stamps | undefined>(
    (items) => this.writeRows(items),
    (item) => item.id,
    1,
    500,
  );

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly sealer: StateSealer,
  ) {}

  async insert(session: NewDigestSession): Promise<DigestSessionRow> {
    const id = randomUUID(); // chosen here: the sealed states are bound to it
    const sealed = this.seal(id, session.algorithms, 0, session.states);
    const stamps = await this.inserts.submit({ id, session, sealed });
    const row: DigestSessionRow = {
      id,
      tenantId: session.tenantId,
      status: 'uploading',
      algorithms: session.algorithms,
      options: session.options,
      uploadMetadata: session.uploadMetadata,
      uploadLength: session.uploadLength,
      uploadOffset: 0,
      states: sealed,
      digests: null,
      error: null,
      createdAt: stamps.created_at,
      updatedAt: stamps.updated_at,
      expiresAt: stamps.expires_at,
      finishedAt: null,
      expired: false,
    };
    this.remember(row, session.states);
    return row;
  }

  /** The session (only if it is `tenantId`'s, when given). */
  async findById(id: string, tenantId: string | null = null): Promise<DigestSessionRow | null> {
    const row = await this.reads.submit(id);
    return row && (tenantId === null || row.tenant_id === tenantId) ? toSession(row) : null;
  }

  /**
   * The session as this instance left it, if it is `tenantId`'s, still uploading at `offset` here
   * and not about to expire: a PATCH continues from it without a read (the write's fence checks it
   * is still so). Undefined: read the row.
   */
  cached(tenantId: string, id: string, offset: number): CachedSession | undefined {
    const entry = this.cache.get(id);
    if (!entry || entry.row.tenantId !== tenantId || entry.row.uploadOffset !== offset)
      return undefined;
    if (entry.row.expiresAt.getTime() - CACHE_EXPIRY_MARGIN_MS <= Date.now()) return undefined;
    return entry;
  }

  /** Drops the cached session (it moved elsewhere, ended or is to be read again). */
  forget(id: string): void {
    this.cache.delete(id);
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

  /**
   * Commits hashed bytes: the new states and offset, fenced on `from` and the states `fence` the
   * row holds there. The session as written (its sealed states included, and cached), or null
   * when fenced off.
   */
  async advance(
    session: DigestSessionRow,
    from: number,
    fence: Buffer[],
    to: SessionProgress,
  ): Promise<DigestSessionRow | null> {
    const sealed = this.seal(session.id, session.algorithms, to.offset, to.states);
    const stamps = await this.writes.submit({
      id: session.id,
      from,
      fence,
      offset: to.offset,
      length: to.length,
      sealed,
      status: 'uploading',
      digests: null,
      error: null,
      idleSeconds: to.idleSeconds,
    });
    if (!stamps) return null;
    const written: DigestSessionRow = {
      ...session,
      uploadOffset: to.offset,
      uploadLength: session.uploadLength ?? to.length,
      states: sealed,
      updatedAt: stamps.updated_at,
      expiresAt: stamps.expires_at,
      expired: false,
    };
    this.remember(written, to.states);
    return written;
  }

  /** Ends the session at its full length: digests (and a mismatch) replace the states, fenced as advance(). */
  async finish(
    session: DigestSessionRow,
    from: number,
    fence: Buffer[],
    outcome: SessionOutcome,
  ): Promise<DigestSessionRow | null> {
    const { id } = session;
    const stamps = await this.writes.submit({
      id,
      from,
      fence,
      offset: outcome.offset,
      length: outcome.length,
      sealed: null,
      status: outcome.status,
      digests: outcome.digests,
      error: outcome.error,
      idleSeconds: outcome.idleSeconds,
    });
    this.forget(id);
    if (!stamps) return null;
    return {
      ...session,
      status: outcome.status,
      uploadOffset: outcome.offset,
      uploadLength: outcome.length,
      states: null,
      digests: inOrder(session.algorithms, outcome.digests),
      error: outcome.error,
      updatedAt: stamps.updated_at,
      expiresAt: stamps.expires_at,
      finishedAt: stamps.finished_at,
      expired: false,
    };
  }

  /** Ends the session 'failed' where it stands, its states gone (they did not open), fenced on `from`. */
  async fail(id: string, from: number, error: SessionError, idleSeconds: number): Promise<boolean> {
    this.forget(id);
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
    this.forget(id);
    const rows = updatedRows<{ id: string }>(
      await this.dataSource.query(`DELETE FROM digest_sessions WHERE id = $1 RETURNING id`, [id]),
    );
    return rows.length === 1;
  }

  /**
   * Ended sessions (succeeded, failed) past their expiry, digests and all, oldest expiry first: the
   * cleanup shows them to DigestSessionsService's discard listeners before expireEnded drops
   * their digests.
   */
  async endedPastExpiry(limit: number): Promise<DigestSessionRow[]> {
    const rows: Row[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM digest_sessions
        WHERE expires_at <= now() AND status IN ('succeeded', 'failed')
        ORDER BY expires_at LIMIT $1`,
      [limit],
    );
    return rows.map(toSession);
  }

  /** These ended sessions lose their digests and stay as 'expired' (410); returns how many. */
  async expireEnded(ids: string[]): Promise<number> {
    for (const id of ids) this.forget(id);
    return updatedRows<{ id: string }>(
      await this.dataSource.query(
        `UPDATE digest_sessions SET status = 'expired', states = NULL, digests = NULL, updated_at = now()
          WHERE id = ANY($1::uuid[]) AND status IN ('succeeded', 'failed')
          RETURNING id`,
        [ids],
      ),
    ).length;
  }

  /**
   * The rest of the cleanup: uploads past their expiry lose their states and stay as 'expired'
   * (410) for `idleSeconds` more (ended sessions: expireEnded); then the row goes too (404).
   * Returns how many of each.
   */
  async sweepExpired(idleSeconds: number): Promise<{ expired: number; deleted: number }> {
    const expired = updatedRows<{ id: string }>(
      await this.dataSource.query(
        `UPDATE digest_sessions SET status = 'expired', states = NULL, digests = NULL, updated_at = now()
          WHERE expires_at <= now() AND status = 'uploading'
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

  private remember(row: DigestSessionRow, opened: Buffer[]): void {
    this.cache.delete(row.id); // re-inserted last: the Map's order is the eviction order
    this.cache.set(row.id, { row, opened: opened.map((state) => Buffer.from(state)) });
    if (this.cache.size > CACHED_SESSIONS) this.cache.delete(this.cache.keys().next().value!);
  }

  /** One SELECT for the rows of many ids (undefined: no such row). */
  private async readRows(ids: string[]): Promise<(Row | undefined)[]> {
    const rows: Row[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM digest_sessions WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id) => byId.get(id));
  }

  /** One INSERT for many new sessions. */
  private async insertRows(items: InsertItem[]): Promise<Stamps[]> {
    const slots = Math.max(...items.map((item) => item.sealed.length));
    const rows: Stamps[] = await this.dataSource.query(
      `INSERT INTO digest_sessions AS d (id, algorithms, options, upload_metadata, upload_length, states, expires_at, tenant_id)
       SELECT v.id, string_to_array(v.algorithms, ','), v.options::jsonb, v.upload_metadata, v.upload_length,
              ${stateArray('s', slots)}, now() + make_interval(secs => v.idle), v.tenant_id
         FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::float8[], $7::int[],
                     $8::text[], ${slotParams(9, slots)})
           AS v(id, algorithms, options, upload_metadata, upload_length, idle, n, tenant_id, ${slotColumns('s', slots)})
       RETURNING ${STAMPS}`,
      [
        items.map((item) => item.id),
        items.map((item) => item.session.algorithms.join(',')),
        items.map((item) => JSON.stringify(item.session.options)),
        items.map((item) => item.session.uploadMetadata),
        items.map((item) => item.session.uploadLength),
        items.map((item) => item.session.idleSeconds),
        items.map((item) => item.sealed.length),
        items.map((item) => item.session.tenantId),
        ...stateSlots(
          items.map((item) => item.sealed),
          slots,
        ),
      ],
    );
    const byId = new Map(rows.map((row) => [row.id, row]));
    return items.map((item) => byId.get(item.id)!);
  }

  /**
   * One UPDATE for many sessions, each fenced on its own (offset, states, status, expiry): the
   * rows returned are those that landed, the others were fenced off. Should it fail (a deadlock
   * between two instances' groups that share sessions, say), StatementBatcher runs each write alone.
   */
  private async writeRows(items: WriteItem[]): Promise<(Stamps | undefined)[]> {
    if (items.length === 1) return [await this.writeRow(items[0])];
    const slots = Math.max(1, ...items.map((item) => item.fence.length));
    const rows = updatedRows<Stamps>(
      await this.dataSource.query(
        `UPDATE digest_sessions d
            SET upload_offset = v.to_offset, upload_length = coalesce(d.upload_length, v.length),
                status = v.status,
                states = CASE WHEN v.status = 'uploading' THEN ${stateArray('s', slots)} END,
                digests = v.digests::jsonb, error_code = v.error_code, error_message = v.error_message,
                error_details = v.error_details::jsonb, updated_at = now(),
                finished_at = CASE WHEN v.status = 'uploading' THEN NULL ELSE now() END,
                expires_at = now() + make_interval(secs => v.idle)
           FROM unnest($1::uuid[], $2::bigint[], $3::bigint[], $4::bigint[], $5::text[], $6::text[],
                       $7::text[], $8::text[], $9::text[], $10::float8[], $11::int[],
                       ${slotParams(12, slots)}, ${slotParams(12 + slots, slots)})
             AS v(id, from_offset, to_offset, length, status, digests, error_code, error_message,
                  error_details, idle, n, ${slotColumns('s', slots)}, ${slotColumns('f', slots)})
          WHERE d.id = v.id AND d.upload_offset = v.from_offset AND d.status = 'uploading'
            AND d.expires_at > now() AND d.states = ${stateArray('f', slots)}
          RETURNING ${STAMPS}`,
        [
          items.map((item) => item.id),
          items.map((item) => item.from),
          items.map((item) => item.offset),
          items.map((item) => item.length),
          items.map((item) => item.status),
          items.map((item) => (item.digests ? JSON.stringify(item.digests) : null)),
          items.map((item) => item.error?.code ?? null),
          items.map((item) => item.error?.message ?? null),
          items.map((item) => (item.error ? JSON.stringify(item.error.details) : null)),
          items.map((item) => item.idleSeconds),
          items.map((item) => item.fence.length),
          ...stateSlots(
            items.map((item) => item.sealed),
            slots,
          ),
          ...stateSlots(
            items.map((item) => item.fence),
            slots,
          ),
        ],
      ),
    );
    const byId = new Map(rows.map((row) => [row.id, row]));
    return items.map((item) => byId.get(item.id));
  }

  /**
   * A lone write (one client's PATCH, the common case when requests do not overlap): the same
   * fenced UPDATE for one row, as a named statement that each pooled connection prepares once, so
   * PostgreSQL parses and plans it once, not at every commit (it is on the path of every 204).
   */
  private async writeRow(item: WriteItem): Promise<Stamps | undefined> {
    const [row] = await WRITE_ONE.rows<Stamps>(this.dataSource, [
      item.id,
      item.from,
      item.offset,
      item.length,
      item.status,
      item.digests ? JSON.stringify(item.digests) : null,
      item.error?.code ?? null,
      item.error?.message ?? null,
      item.error ? JSON.stringify(item.error.details) : null,
      item.idleSeconds,
      item.sealed,
      item.fence,
    ]);
    return row;
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
