/**
 * An isolated hashq environment for one test file: a fresh PostgreSQL database with every
 * migration applied, a unique BullMQ prefix, and an empty folder as the only file root.
 *
 *   import { createTestEnv, type TestEnv } from './helpers/env';
 *
 *   let env: TestEnv;
 *   beforeAll(async () => { env = await createTestEnv(); });
 *   afterAll(() => env.cleanup());               // drops the database, deletes the Redis keys
 *
 *   env.env            // environment variables for a child process: spawn(node, [worker], { env: { ...process.env, ...env.env } })
 *   env.config         // the same as a validated HashqConfig
 *   env.fileRoot       // write test files here (it is HASHQ_FILE_ROOTS)
 *   env.stateKey       // the test's own state key (HASHQ_STATE_KEYS = `${stateKey.id}:${base64}`)
 *   env.databaseUrl, env.schema, env.queuePrefix
 *   env.apiKey, env.auth // an admin key of the default tenant, and { Authorization: 'Bearer …' }
 *                        // (createApiApp sends it on requests that carry no Authorization)
 *
 * The API app on top of it: see ./api.ts (createApiApp). Set TEST_DATABASE_URL / REDIS_URL to use
 * other servers than the local defaults; the database named in TEST_DATABASE_URL is only used to
 * run CREATE/DROP DATABASE.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { pgSql } from '@hashq/bench';
import { type HashqConfig, loadConfig, type StateKey } from '@hashq/config';
import { runMigrations } from '@hashq/database';
import { TenantsRepository } from '@hashq/jobs';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';

import { ApiKeysService } from '../../apps/api/src/auth/api-keys.service';
import { KeysRepository } from '../../apps/api/src/auth/keys.repository';
import { LOCAL_PRINCIPAL, type Scope } from '../../apps/api/src/auth/principal';

export interface TestEnv {
  databaseUrl: string;
  schema: string;
  queuePrefix: string;
  redisUrl: string;
  fileRoot: string;
  /** The key that seals this test's hash states (its own, random). */
  stateKey: StateKey;
  /** Every hashq variable, ready to pass to a child process or AppModule.forRoot({ env }). */
  env: Record<string, string>;
  config: HashqConfig;
  /** An admin key of the default tenant (made after the migrations). */
  apiKey: string;
  /** `{ Authorization: 'Bearer <apiKey>' }` for requests. */
  auth: Record<string, string>;
  cleanup(): Promise<void>;
}

export interface TestKey {
  tenantId?: string;
  name?: string;
  scopes: Scope[];
  expiresAt?: Date;
  /** Create the tenant first when it does not exist. */
  createTenant?: boolean;
}

/** Makes a key in the test database (as `npm run keys -- create` does); returns the whole key. */
export async function createTestKey(
  database: Pick<TestEnv, 'databaseUrl' | 'schema'>,
  key: TestKey,
): Promise<{ id: string; key: string }> {
  const client = new Client({ connectionString: database.databaseUrl });
  await client.connect();
  try {
    await client.query(`SET search_path TO "${database.schema}"`);
    const sql = pgSql(client);
    const tenants = new TenantsRepository(sql);
    const service = new ApiKeysService(new KeysRepository(sql), tenants);
    const tenantId = key.tenantId ?? 'default';
    if (key.createTenant && !(await tenants.find(tenantId))) {
      await tenants.insert({ id: tenantId, name: tenantId });
    }
    const created = await service.create(LOCAL_PRINCIPAL, {
      tenantId,
      name: key.name ?? 'test',
      scopes: key.scopes,
      expiresAt: key.expiresAt,
    });
    return { id: created.id, key: created.key! };
  } finally {
    await client.end();
  }
}

const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

async function withAdmin<T>(run: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** Deletes every Redis key under `prefix:` (SCAN + DEL; never FLUSHALL, the server is shared). */
export async function deleteRedisKeys(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/** A random state key (32 bytes) with the given id. */
export function testStateKey(id: string): StateKey {
  return { id, key: randomBytes(32) };
}

/** HASHQ_STATE_KEYS for these keys (the first seals). */
export function stateKeysEnv(...keys: StateKey[]): string {
  return keys.map(({ id, key }) => `${id}:${key.toString('base64')}`).join(',');
}

export async function createTestEnv(overrides: Record<string, string> = {}): Promise<TestEnv> {
  const id = randomBytes(6).toString('hex');
  const database = `hashq_test_${id}`;
  await withAdmin((admin) => admin.query(`CREATE DATABASE ${database}`));
  const databaseUrl = Object.assign(new URL(ADMIN_URL), { pathname: `/${database}` }).toString();
  const fileRoot = await realpath(await mkdtemp(join(tmpdir(), `hashq-test-${id}-`)));
  const stateKey = testStateKey(`t${id}`);
  const env: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    DATABASE_SCHEMA: 'public',
    REDIS_URL,
    QUEUE_PREFIX: `hashq_test_${id}`,
    HASHQ_FILE_ROOTS: fileRoot,
    HASHQ_STATE_KEYS: stateKeysEnv(stateKey),
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...overrides,
  };
  const config = loadConfig(env);

  const cleanup = async (): Promise<void> => {
    await deleteRedisKeys(config.redisUrl, config.queuePrefix);
    await withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`));
    await rm(fileRoot, { recursive: true, force: true });
  };
  let apiKey: string;
  try {
    await runMigrations(config);
    ({ key: apiKey } = await createTestKey(
      { databaseUrl, schema: config.databaseSchema },
      { name: 'test admin', scopes: ['admin'] },
    ));
  } catch (err) {
    await cleanup();
    throw err;
  }
  return {
    databaseUrl,
    schema: config.databaseSchema,
    queuePrefix: config.queuePrefix,
    redisUrl: config.redisUrl,
    fileRoot,
    stateKey,
    env,
    config,
    apiKey,
    auth: { Authorization: `Bearer ${apiKey}` },
    cleanup,
  };
}

/**
 * Undoes the applied migrations, newest first, down to and including `name`: the schema as it was
 * before that migration, whatever migrations came after it.
 */
export async function undoThrough(dataSource: DataSource, name: string): Promise<void> {
  for (;;) {
    const [last] = (await dataSource.query(
      `SELECT name FROM typeorm_migrations ORDER BY id DESC LIMIT 1`,
    )) as { name: string }[];
    if (!last) throw new Error(`migration ${name} was never applied`);
    await dataSource.undoLastMigration({ transaction: 'each' });
    if (last.name === name) return;
  }
}
