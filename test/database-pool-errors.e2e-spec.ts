/**
 * PostgreSQL terminating the app's pooled connections (a restart, a failover,
 * pg_terminate_backend) must never be an uncaught 'error' event: DatabaseModule gives
 * the pg pool a handler that logs through the structured logger, and the next query
 * opens a new connection.
 */
import { Writable } from 'node:stream';
import { Test, type TestingModule } from '@nestjs/testing';
import { getDataSourceToken } from '@nestjs/typeorm';
import { Client } from 'pg';
import pino from 'pino';
import type { DataSource } from 'typeorm';
import { HashqConfigModule } from '@hashq/config';
import { DatabaseModule } from '@hashq/database';
import { createTestEnv, type TestEnv } from './helpers/env';

describe('database pool errors', () => {
  let env: TestEnv;
  let moduleRef: TestingModule;
  let admin: Client;
  const lines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    env = await createTestEnv();
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const text of chunk.toString('utf8').split('\n')) if (text) lines.push(JSON.parse(text));
        done();
      },
    });
    moduleRef = await Test.createTestingModule({
      imports: [HashqConfigModule.forRoot({ name: 'test', env: env.env, logger: pino({ level: 'info' }, sink) }), DatabaseModule],
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
    const pids = await Promise.all([0, 1, 2].map(async () => (await db.query('SELECT pg_backend_pid() AS pid, pg_sleep(0.05)'))[0].pid as number));
    const killed = await admin.query<{ ok: boolean }>('SELECT pg_terminate_backend(pid) AS ok FROM unnest($1::int[]) AS pid', [
      [...new Set(pids)],
    ]);
    expect(killed.rows.every((row) => row.ok)).toBe(true);

    const deadline = Date.now() + 10_000;
    const lost = () => lines.filter((line) => line.msg === 'postgres connection lost');
    while (lost().length < new Set(pids).size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(lost()).toHaveLength(new Set(pids).size);
    for (const line of lost()) {
      expect(line.level).toBe(40); // warn
      expect((line.err as { message: string; code: string }).message).toMatch(/terminating connection due to administrator command/);
      expect((line.err as { code: string }).code).toBe('57P01'); // admin_shutdown (PostgreSQL error codes, appendix A)
      expect(JSON.stringify(line)).not.toContain(env.databaseUrl);
    }

    // the pool replaced them: a new session answers
    const [{ pid }] = await db.query('SELECT pg_backend_pid() AS pid');
    expect(pids).not.toContain(pid);
  }, 30_000);
});
