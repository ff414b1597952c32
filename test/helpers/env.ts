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
 *
 * The API app on top of it: see ./api.ts (createApiApp). Set TEST_DATABASE_URL / REDIS_URL to use
 * other servers than the local defaults; the database named in TEST_DATABASE_URL is only used to
 * run CREATE/DROP DATABASE.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type HashqConfig, loadConfig, type StateKey } from '@hashq/config';
import { runMigrations } from '@hashq/database';
import { Redis } from 'ioredis';
import { Client } from 'pg';

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
  cleanup(): Promise<void>;
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
  try {
    await runMigrations(config);
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
    cleanup,
  };
}
