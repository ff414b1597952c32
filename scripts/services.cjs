#!/usr/bin/env node
// Small probes for scripts/start.sh (it runs before anything is built):
//   node scripts/services.cjs pg-ready <url>          exit 0 when the PostgreSQL server answers `select 1`
//   node scripts/services.cjs redis-ready <url>       exit 0 when Redis answers PING
//   node scripts/services.cjs ensure-database <url>   creates the database of <url> if it is missing (prints its name)
//   node scripts/services.cjs wait-http <url> <secs>  exit 0 once <url> answers 2xx
const { Client } = require('pg');
const { Redis } = require('ioredis');

const TIMEOUT_MS = 2000;

/** The same server, its maintenance database: the target database may not exist yet. */
function serverUrl(url) {
  const parsed = new URL(url);
  parsed.pathname = '/postgres';
  return parsed.toString();
}

async function withPg(url, run) {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: TIMEOUT_MS });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

const commands = {
  async 'pg-ready'(url) {
    await withPg(serverUrl(url), (client) => client.query('select 1'));
  },
  async 'redis-ready'(url) {
    const redis = new Redis(url, {
      lazyConnect: true,
      connectTimeout: TIMEOUT_MS,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    redis.on('error', () => undefined);
    try {
      await redis.connect();
      if ((await redis.ping()) !== 'PONG') throw new Error('no PONG');
    } finally {
      redis.disconnect();
    }
  },
  async 'ensure-database'(url) {
    const name = decodeURIComponent(new URL(url).pathname.slice(1));
    if (!/^[A-Za-z0-9_]+$/.test(name)) throw new Error(`unsupported database name "${name}"`);
    await withPg(serverUrl(url), async (client) => {
      const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [
        name,
      ]);
      if (rowCount === 0) {
        await client.query(`CREATE DATABASE "${name}"`);
        console.log(name);
      }
    });
  },
  async 'wait-http'(url, seconds = '60') {
    const deadline = Date.now() + Number(seconds) * 1000;
    for (;;) {
      try {
        const res = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
        if (res.ok) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`${url} did not answer within ${seconds} s`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  },
};

const [command, ...args] = process.argv.slice(2);
if (!commands[command]) {
  console.error(`usage: services.cjs ${Object.keys(commands).join('|')} <url>`);
  process.exit(2);
}
commands[command](...args).then(
  () => process.exit(0),
  (err) => {
    if (process.env.HASHQ_DEBUG) console.error(err);
    if (command !== 'pg-ready' && command !== 'redis-ready')
      console.error(`[hashq] ${err.message}`);
    process.exit(1);
  },
);
