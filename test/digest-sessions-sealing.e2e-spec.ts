/**
 * Digest-session states sealed at rest (HASHQ_STATE_KEYS), real PostgreSQL, the API in process:
 * - a state copied into another session, put back after its session moved on, altered by a bit,
 *   or stored in plaintext: the PATCH is refused (422 STATE_INVALID) and the session ends failed
 *   without digests, while the session it was copied from completes to Node's digest;
 * - no plaintext input anywhere in the database (pg_dump) while a session is mid-upload;
 * - the migration refuses to seal plaintext states without a key, and seals them with one.
 */
import { randomBytes } from 'node:crypto';

import { readSealedHeader, sessionStateBinding, StateSealer } from '@hashq/crypto';
import { dataSourceOptions, runMigrations } from '@hashq/database';
import { createHasher } from '@hashq/native';
import type { INestApplication } from '@nestjs/common';
import { Client } from 'pg';
import request from 'supertest';
import { DataSource } from 'typeorm';

import { createApiApp } from './helpers/api';
import { createTestEnv, type TestEnv } from './helpers/env';
import { PlaintextScan } from './helpers/plaintext-scan';
import { MiB, nodeDigest, TUS } from './helpers/tus';

const b64 = (text: string) => Buffer.from(text).toString('base64');

/** A test database and the API on it, with the tus requests the tests make. */
class SessionsEnv {
  env!: TestEnv;
  app!: INestApplication;
  db!: Client;

  async setUp(): Promise<void> {
    this.env = await createTestEnv();
    this.app = await createApiApp(this.env);
    this.db = new Client({ connectionString: this.env.databaseUrl });
    await this.db.connect();
  }

  async tearDown(): Promise<void> {
    await this.db?.end();
    await this.app?.close();
    await this.env?.cleanup();
  }

  http() {
    return request(this.app.getHttpServer());
  }

  /** A session for `data`, with its first `offset` bytes PATCHed; its id. */
  async started(algorithms: string[], data: Buffer, offset: number): Promise<string> {
    const created = await this.http()
      .post('/v1/digest-sessions')
      .set(TUS)
      .set({
        'Upload-Length': String(data.length),
        'Upload-Metadata': `algorithms ${b64(algorithms.join(','))}`,
      })
      .expect(201);
    const id = created.headers.location.split('/').pop()!;
    if (offset > 0) await this.patch(id, 0, data.subarray(0, offset)).expect(204);
    return id;
  }

  patch(id: string, offset: number, body: Buffer) {
    return this.http()
      .patch(`/v1/digest-sessions/${id}`)
      .set(TUS)
      .set({ 'Content-Type': 'application/offset+octet-stream', 'Upload-Offset': String(offset) })
      .send(body);
  }

  async states(id: string): Promise<Buffer[] | null> {
    return (await this.db.query('SELECT states FROM digest_sessions WHERE id = $1', [id])).rows[0]
      .states;
  }
}

/** Serialized states of hashq's hashers after `data`, as the API keeps them before sealing. */
function plaintextStates(algorithms: string[], data: Buffer): Buffer[] {
  return algorithms.map((name) => {
    const hasher = createHasher(name);
    hasher.update(data);
    return Buffer.from(hasher.serialize());
  });
}

describe('digest-session states sealed at rest (e2e, real PostgreSQL)', () => {
  const s = new SessionsEnv();
  beforeAll(() => s.setUp());
  afterAll(() => s.tearDown());

  /** The PATCH was refused with STATE_INVALID, and the session ended failed, states and digests gone. */
  const expectRefused = async (id: string, offset: number, rest: Buffer, message: RegExp) => {
    const res = await s.patch(id, offset, rest);
    expect([res.status, res.headers['tus-resumable'], res.body.error?.code]).toEqual([
      422,
      '1.0.0',
      'STATE_INVALID',
    ]);
    expect(res.body.error.message).toMatch(message);
    const session = (await s.http().get(`/v1/digest-sessions/${id}`).expect(200)).body;
    expect(session).toMatchObject({
      status: 'failed',
      offset,
      digests: null,
      error: { code: 'STATE_INVALID' },
    });
    expect(await s.states(id)).toBeNull();
    const again = await s.patch(id, offset, rest);
    expect([again.status, again.body.error?.code]).toEqual([422, 'STATE_INVALID']);
  };

  it('refuses a state moved from another session, replayed at a later offset or altered (422)', async () => {
    const algorithms = ['sha256', 'md5'];
    const [a, moved, replayed, flipped] = [0, 1, 2, 3].map(() => randomBytes(3000));
    const ids = {
      a: await s.started(algorithms, a, 1000),
      moved: await s.started(algorithms, moved, 1000),
      replayed: await s.started(algorithms, replayed, 1000),
      flipped: await s.started(algorithms, flipped, 1000),
    };
    // a's states in moved's row: same algorithms and offset, only the session differs. Opened,
    // they would continue moved's upload from a's bytes: a wrong digest.
    await s.db.query(
      `UPDATE digest_sessions SET states = (SELECT states FROM digest_sessions WHERE id = $1) WHERE id = $2`,
      [ids.a, ids.moved],
    );
    // replayed's states at 1000, put back once the session has moved on to 2000
    const old = await s.states(ids.replayed);
    await s.patch(ids.replayed, 1000, replayed.subarray(1000, 2000)).expect(204);
    await s.db.query(`UPDATE digest_sessions SET states = $2 WHERE id = $1`, [ids.replayed, old]);
    await s.db.query(
      `UPDATE digest_sessions SET states[2] = set_byte(states[2], 40, get_byte(states[2], 40) # 1) WHERE id = $1`,
      [ids.flipped],
    );

    const elsewhere = /does not authenticate .* session [0-9a-f-]{36}, sha256, offset 1000/;
    await expectRefused(ids.moved, 1000, moved.subarray(1000), elsewhere);
    await expectRefused(
      ids.replayed,
      2000,
      replayed.subarray(2000),
      /does not authenticate .* sha256, offset 2000/,
    );
    await expectRefused(
      ids.flipped,
      1000,
      flipped.subarray(1000),
      /does not authenticate .* md5, offset 1000/,
    );

    const last = await s.patch(ids.a, 1000, a.subarray(1000)).expect(204);
    expect(last.headers['hashq-digest']).toBe(
      `sha256="${nodeDigest('sha256', a)}", md5="${nodeDigest('md5', a)}"`,
    );
  });

  it('leaves no plaintext input in the database mid-upload; a plaintext state is refused', async () => {
    const scan = new PlaintextScan();
    const data = scan.input(3 * MiB);
    const algorithms = ['sha256', 'md5', 'sha3-256'];
    // mid-block for every one of them (64- and 136-byte blocks): each state holds a tail of input
    const offset = MiB + 1000;
    expect([offset % 64, offset % 136].every((tail) => tail >= 24)).toBe(true);
    const uploading = await s.started(algorithms, data, offset);
    const finished = await s.started(algorithms, data, offset);
    await s.patch(finished, offset, data.subarray(offset)).expect(204);
    expect((await s.states(uploading))!.map((state) => readSealedHeader(state).keyId)).toEqual(
      algorithms.map(() => s.env.stateKey.id),
    );

    expect(scan.found(await scan.dump(s.env.databaseUrl))).toBe(false);

    // The search would see these states unsealed: plant them and dump again.
    const plaintext = plaintextStates(algorithms, data.subarray(0, offset));
    expect(plaintext.map((state) => scan.found(state.toString('latin1')))).toEqual([
      true,
      true,
      true,
    ]);
    await s.db.query(`UPDATE digest_sessions SET states = $2 WHERE id = $1`, [
      uploading,
      plaintext,
    ]);
    expect(scan.found(await scan.dump(s.env.databaseUrl))).toBe(true);
    await expectRefused(uploading, offset, data.subarray(offset), /not a sealed state/);
    expect(scan.found(await scan.dump(s.env.databaseUrl))).toBe(false);
  });
});

describe('the migration that seals stored session states', () => {
  const s = new SessionsEnv();
  beforeAll(() => s.setUp());
  afterAll(() => s.tearDown());

  it('refuses without a key, seals with one (ended sessions lose theirs), and the session completes', async () => {
    const config = s.env.config;
    const data = randomBytes(3000);
    const uploading = await s.started(['sha256'], data, 1000);
    const finished = await s.started(['sha256'], data, 0);
    await s.patch(finished, 0, data).expect(204);
    // Back to plaintext states (the migration's down() opens them; every later migration is undone
    // first), and states an earlier version might have left on an ended session.
    const dataSource = await new DataSource(dataSourceOptions(config)).initialize();
    const later = dataSource.migrations.length;
    const sealing = dataSource.migrations.findIndex(
      (m) => m.name === 'SealSessionStates1796400000000',
    );
    for (let undone = sealing; undone < later; undone++)
      await dataSource.undoLastMigration({ transaction: 'each' });
    await dataSource.destroy();
    const plaintext = plaintextStates(['sha256'], data.subarray(0, 1000));
    expect(await s.states(uploading)).toEqual(plaintext);
    await s.db.query(`UPDATE digest_sessions SET states = $2 WHERE id = $1`, [finished, plaintext]);

    const keyless = { databaseUrl: config.databaseUrl, databaseSchema: config.databaseSchema };
    await expect(runMigrations(keyless)).rejects.toThrow(
      /^digest_sessions holds 1 session\(s\) with plaintext hash states of uploading sessions to seal, which needs/,
    );
    expect([await s.states(uploading), await s.states(finished)]).toEqual([plaintext, plaintext]); // nothing changed

    const applied = await runMigrations(config);
    expect(applied[0]).toBe('SealSessionStates1796400000000');
    expect(applied).toHaveLength(later - sealing);
    expect(await s.states(finished)).toBeNull();
    const [sealed] = (await s.states(uploading))!;
    expect(readSealedHeader(sealed).keyId).toBe(s.env.stateKey.id);
    const binding = sessionStateBinding(uploading, 'sha256', 1000);
    expect(new StateSealer(config.stateKeys).open(sealed, binding)).toEqual(plaintext[0]);

    const last = await s.patch(uploading, 1000, data.subarray(1000)).expect(204);
    expect(last.headers['hashq-digest']).toBe(`sha256="${nodeDigest('sha256', data)}"`);
  });
});
