/**
 * PostgreSQL terminating the app's pooled connections (a restart, a failover,
 * pg_terminate_backend) must never be an uncaught 'error' event: DatabaseModule gives
 * the pg pool a handler that logs through the structured logger, every pooled client a
 * permanent 'error' listener (idle, checked out, or in between), and the next query
 * opens a new connection. The API app is checked the same way with its backends
 * terminated in the middle of requests: 503 DATABASE_UNAVAILABLE, then it serves again.
 */
import { EventEmitter } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';

import { HashqConfigModule } from '@hashq/config';
import { DatabaseModule } from '@hashq/database';
import type { INestApplication } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { getDataSourceToken } from '@nestjs/typeorm';
import { Client } from 'pg';
import pino from 'pino';
import request from 'supertest';
import type { DataSource } from 'typeorm';

import { createApiApp } from './helpers/api';
import { createTestEnv, type TestEnv } from './helpers/env';

/** pg-pool behind a TypeORM DataSource (connect() hands out a client as TypeORM's query runners get it). */
type PgPool = EventEmitter & {
  connect(): Promise<EventEmitter & { release(err?: Error | boolean): void }>;
};
const poolOf = (db: DataSource) => (db.driver as unknown as { master: PgPool }).master;

describe('database pool errors', () => {
  let env: TestEnv;
  let moduleRef: TestingModule;
  let admin: Client;
  const lines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    env = await createTestEnv();
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const text of chunk.toString('utf8').split('\n'))
          if (text) lines.push(JSON.parse(text));
        done();
      },
    });
    moduleRef = await Test.createTestingModule({
      imports: [
        HashqConfigModule.forRoot({
          name: 'test',
          env: env.env,
          logger: pino({ level: 'info' }, sink),
        }),
        DatabaseModule,
      ],
    }).compile();
    await moduleRef.init();
    admin = new Client({ connectionString: env.databaseUrl });
    await admin.connect();
  }, 60_000);

  afterAll(async () => {
    await admin?.end();
    await moduleRef?.close();
    await env?.cleanup();
  });

  it('logs a terminated idle connection and keeps working', async () => {
    const db = moduleRef.get<DataSource>(getDataSourceToken());
    // three connections in the pool, idle once the queries are done
    const pids = await Promise.all(
      [0, 1, 2].map(
        async () =>
          (await db.query('SELECT pg_backend_pid() AS pid, pg_sleep(0.05)'))[0].pid as number,
      ),
    );
    const killed = await admin.query<{ ok: boolean }>(
      'SELECT pg_terminate_backend(pid) AS ok FROM unnest($1::int[]) AS pid',
      [[...new Set(pids)]],
    );
    expect(killed.rows.every((row) => row.ok)).toBe(true);

    const deadline = Date.now() + 10_000;
    const lost = () => lines.filter((line) => line.msg === 'postgres connection lost');
    while (lost().length < new Set(pids).size && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(lost()).toHaveLength(new Set(pids).size);
    for (const line of lost()) {
      expect(line.level).toBe(40); // warn
      expect((line.err as { message: string; code: string }).message).toMatch(
        /terminating connection due to administrator command/,
      );
      expect((line.err as { code: string }).code).toBe('57P01'); // admin_shutdown (PostgreSQL error codes, appendix A)
      expect(JSON.stringify(line)).not.toContain(env.databaseUrl);
    }

    // the pool replaced them: a new session answers
    const [{ pid }] = await db.query('SELECT pg_backend_pid() AS pid');
    expect(pids).not.toContain(pid);
  }, 30_000);
});

describe('database pool errors in the API', () => {
  let env: TestEnv;
  let api: INestApplication;
  let admin: Client;

  beforeAll(async () => {
    env = await createTestEnv();
    api = await createApiApp(env);
    admin = new Client({ connectionString: env.databaseUrl });
    await admin.connect();
  }, 60_000);

  afterAll(async () => {
    await admin?.end();
    await api?.close();
    await env?.cleanup();
  });

  it('every pooled client has an error listener of its own, also while checked out', async () => {
    const pool = poolOf(api.get<DataSource>(getDataSourceToken()));
    // A checked-out client is no longer watched by pg-pool (it removes its idle listener); without
    // a listener of hashq's, an 'error' emitted now would throw ("Unhandled 'error' event").
    const client = await pool.connect();
    try {
      expect(client.listenerCount('error')).toBeGreaterThanOrEqual(1);
      expect(() =>
        client.emit('error', new Error('Connection terminated unexpectedly')),
      ).not.toThrow();
    } finally {
      client.release(true); // destroy it: it "failed"
    }
  });

  it('answers 503 DATABASE_UNAVAILABLE when its backends are terminated mid-request, then serves again', async () => {
    // One listening server for concurrent requests (supertest would listen once per request).
    await api.listen(0, '127.0.0.1');
    const http = request(await api.getUrl());
    await writeFile(join(env.fileRoot, 'a.bin'), 'abc');
    const created = await http
      .post('/v1/jobs')
      .send({ source: { type: 'file', path: join(env.fileRoot, 'a.bin') }, algorithms: ['sha256'] })
      .expect(202);
    const id = created.body.id as string;

    // Hold every request's query inside PostgreSQL: the jobs table is locked by the test (from
    // another session than the one watching pg_stat_activity, whose view is frozen in a transaction).
    const locker = new Client({ connectionString: env.databaseUrl });
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE');
    const lockerPid = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))
      .rows[0].pid;
    const inFlight = [
      http.get('/v1/jobs'),
      http.get(`/v1/jobs/${id}`),
      http.post('/v1/jobs').send({
        source: { type: 'file', path: join(env.fileRoot, 'a.bin') },
        algorithms: ['sha1'],
      }),
    ].map((req) => req.then((res) => res));
    const waiting = async () =>
      (
        await admin.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`,
        )
      ).rows[0].n;
    const deadline = Date.now() + 10_000;
    while ((await waiting()) < inFlight.length && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(await waiting()).toBe(inFlight.length);

    const killed = await admin.query<{ ok: boolean }>(
      `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND pid <> $1`,
      [lockerPid],
    );
    expect(killed.rows.length).toBeGreaterThanOrEqual(inFlight.length);
    expect(killed.rows.every((row) => row.ok)).toBe(true);
    const answers = await Promise.all(inFlight);
    await locker.end(); // its transaction ends with it
    for (const res of answers) {
      expect([res.status, res.body.error?.code]).toEqual([503, 'DATABASE_UNAVAILABLE']);
    }

    // Still alive, on new connections.
    const list = await http.get('/v1/jobs').expect(200);
    expect(list.body.items.map((job: { id: string }) => job.id)).toContain(id);
    await http.get(`/v1/jobs/${id}`).expect(200);
    await http
      .post('/v1/jobs')
      .send({ source: { type: 'file', path: join(env.fileRoot, 'a.bin') }, algorithms: ['md5'] })
      .expect(202);
  }, 30_000);
});
