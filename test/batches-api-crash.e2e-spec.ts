/**
 * Batches survive a SIGKILLed API (real processes: dist/apps/api/main.js and workers), held at
 * known points by locks, not by timing:
 * 1. the API dies inside POST /v1/batches of a large inline manifest, its INSERT waiting on a lock
 *    of the batches table: PostgreSQL commits that INSERT once the lock goes, so the batch row
 *    exists and its listing was never put on Redis. A new API instance's reconciler dispatches it;
 *    the client's retry with the same Idempotency-Key (asked in step 3) is answered with that
 *    batch, not a second.
 * 2. the API and the worker die together while the listing is half committed (the insert of one
 *    listed item waits on an advisory lock the test holds), a new API and a new worker finish.
 * Then: one batch, one row per manifest line, one result each, counters equal to the rows, digests
 * equal to Node's crypto, and the sha256sum report passes `sha256sum -c`.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { BATCH_LIST_QUEUE } from '@hashq/jobs';
import { Queue } from 'bullmq';
import { Client } from 'pg';

import { type ApiProcess, startApiProcess } from './helpers/api-process';
import { type BatchBody, ENDED, type ItemBody, sha256, writeTree } from './helpers/batches';
import { fileDigest, MiB, type WorkerProcess, WorkerTestEnv } from './helpers/worker-process';

const run = promisify(execFile);

const FILES = 4000;
const GROUP = 50;
/** The listed item whose insert waits on the test's advisory lock (pages 1–20 are committed). */
const HOLD_SEQ = 1001;
const HOLD_LOCK = 7_031_402;
const KEY = `api-crash-${randomBytes(4).toString('hex')}`;

// The machine is shared: whole batches through real processes get generous time.
const TIMEOUT = 300_000;

describe('batches survive a killed API', () => {
  const env = new WorkerTestEnv();
  const apis: ApiProcess[] = [];
  const workers: WorkerProcess[] = [];
  let lists: Queue;
  const settings = {
    BATCH_GROUP_SIZE: String(GROUP),
    BATCH_SMALL_ITEM_BYTES: String(MiB),
    CHUNK_BYTES: String(MiB),
    CHECKPOINT_BYTES: String(16 * MiB),
    CHECKPOINT_SECONDS: '3600',
    // Reconcilers run at start only: what brings a batch back is the instance started after a kill.
    RECONCILE_SECONDS: '3600',
  };

  const startWorker = async () => {
    const worker = env.startWorker(settings);
    workers.push(worker);
    await worker.waitForLog((line) => line.msg === 'worker started');
    return worker;
  };
  const startApi = async () => {
    const api = await startApiProcess({ ...env.env.env, ...settings });
    apis.push(api);
    return api;
  };
  const kill = async (proc: WorkerProcess) => {
    proc.kill('SIGKILL');
    await proc.exited;
  };

  beforeAll(async () => {
    await env.setUp();
    // Explicit: a backend whose client died still finishes the statement it waits in (the default).
    await env.db.query(
      `ALTER DATABASE "${env.db.database}" SET client_connection_check_interval = 0`,
    );
    lists = new Queue(BATCH_LIST_QUEUE, {
      connection: { url: env.env.redisUrl },
      prefix: env.env.queuePrefix,
    });
  });

  afterAll(async () => {
    for (const api of apis) await api.process.stop('SIGKILL');
    for (const worker of workers) await worker.stop('SIGKILL');
    await lists?.close();
    await env.tearDown();
  });

  function post(api: ApiProcess, body: unknown): Promise<Response> {
    return fetch(`${api.url}/v1/batches`, {
      method: 'POST',
      headers: { ...env.env.auth, 'content-type': 'application/json', 'idempotency-key': KEY },
      body: JSON.stringify(body),
    });
  }

  async function getJson<T>(api: ApiProcess, path: string): Promise<T> {
    const res = await fetch(`${api.url}${path}`, { headers: env.env.auth });
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  }

  async function ended(api: ApiProcess, id: string): Promise<BatchBody> {
    const deadline = Date.now() + 180_000;
    for (;;) {
      const batch = await getJson<BatchBody>(api, `/v1/batches/${id}`);
      if (ENDED.includes(batch.status)) return batch;
      if (Date.now() > deadline) {
        const tails = workers.map((w) => w.tail()).join('\n---\n');
        throw new Error(`batch ${id} still ${JSON.stringify(batch)}\n${tails}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** A session of its own that holds what `sql` takes until ended. */
  async function locker(sql: string): Promise<Client> {
    const session = new Client({ connectionString: env.env.databaseUrl });
    session.on('error', () => undefined);
    await session.connect();
    await session.query('BEGIN');
    await session.query(sql);
    return session;
  }

  /**
   * Resolves once a session waits on a lock of that kind ('relation', 'advisory'); after 90 s it
   * fails with what the database's sessions and the workers were doing (a bare test timeout
   * would say nothing).
   */
  async function waitForLockWaiter(kind: 'relation' | 'advisory'): Promise<void> {
    const deadline = Date.now() + 90_000;
    for (;;) {
      const { rows } = await env.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = $1`,
        [kind],
      );
      if (rows[0].n > 0) return;
      if (Date.now() > deadline) {
        const activity = await env.db.query(
          `SELECT state, wait_event_type, wait_event, left(query, 120) AS query FROM pg_stat_activity
            WHERE datname = current_database()`,
        );
        const tails = workers.map((w) => w.tail()).join('\n---\n');
        throw new Error(
          `no session waits on a ${kind} lock: ${JSON.stringify(activity.rows)}\n${tails}`,
        );
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async function batchRows(): Promise<{ id: string; status: string; listed: number }[]> {
    const { rows } = await env.db.query<{ id: string; status: string; listed_items: string }>(
      `SELECT id, status, listed_items FROM batches`,
    );
    return rows.map((row) => ({
      id: row.id,
      status: row.status,
      listed: Number(row.listed_items),
    }));
  }

  it(
    'a batch whose API died in POST or mid-run completes once, every line with one result',
    async () => {
      // A manifest of FILES small files (a few awkward names) and one big file, run as a job.
      const files: Record<string, Buffer> = {};
      for (let i = 0; i < FILES; i++) {
        const name = i % 500 === 7 ? `odd ü \\ name ${i}.bin` : `d${i % 9}/f${i}.bin`;
        files[name] = randomBytes(1 + ((i * 37) % 3000));
      }
      const dir = await writeTree(join(env.dataDir, 'many'), files);
      const bigPath = await env.createFile('big.bin', 24);
      const paths = [...Object.keys(files).map((name) => join(dir, name)), bigPath];
      const body = {
        source: { type: 'manifest', format: 'lines', content: `${paths.join('\n')}\n` },
        algorithms: ['sha256'],
      };

      await env.db.query(`
        CREATE FUNCTION test_hold_listing() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.seq = ${HOLD_SEQ} THEN PERFORM pg_advisory_xact_lock_shared(${HOLD_LOCK}); END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER test_hold_listing BEFORE INSERT ON batch_items
          FOR EACH ROW EXECUTE FUNCTION test_hold_listing()`);
      const held = await locker(`SELECT pg_advisory_lock(${HOLD_LOCK})`);

      const firstWorker = await startWorker();

      // 1. The API dies while its INSERT of the batch waits on a lock of the batches table.
      const firstApi = await startApi();
      const tableLock = await locker(`LOCK TABLE batches IN SHARE MODE`);
      const answer = post(firstApi, body).then(
        (res) => ({ status: res.status }),
        (err: Error) => ({ error: err.message }),
      );
      await waitForLockWaiter('relation');
      await kill(firstApi.process);
      expect(await answer).toEqual({ error: 'fetch failed' }); // the client never got an answer
      await tableLock.end();
      await env.waitForWorkerStatementsDone();
      const [created] = await batchRows();
      expect(await batchRows()).toEqual([{ id: created.id, status: 'queued', listed: 0 }]);
      expect(await lists.getJob(created.id)).toBeUndefined(); // a batch row without its dispatch

      // A new instance's reconciler dispatches the listing.
      const secondApi = await startApi();
      await secondApi.process.waitForLog(
        (line) => line.msg === 're-enqueued batch work missing from Redis',
      );

      // 2. The listing waits on the item HOLD_SEQ (pages before it committed): kill API and worker.
      await waitForLockWaiter('advisory');
      expect(await batchRows()).toEqual([
        { id: created.id, status: 'running', listed: HOLD_SEQ - 1 },
      ]);
      await kill(secondApi.process);
      await kill(firstWorker);
      await held.end();

      // 3. A new API and a new worker finish the batch; the client's retry (same Idempotency-Key)
      // is answered with that batch. Not asked earlier: its INSERT ... ON CONFLICT waits for the
      // listing's transaction (which rewrote the batch's row), and from step 2 on that one waits
      // on this test's advisory lock.
      const api = await startApi();
      await startWorker();
      const retried = await post(api, body);
      expect(retried.status).toBe(202);
      expect(retried.headers.get('idempotent-replayed')).toBe('true');
      expect(((await retried.json()) as BatchBody).id).toBe(created.id);
      const batch = await ended(api, created.id);
      const total = paths.length;
      expect(batch.status).toBe('succeeded');
      expect(batch.items).toEqual({
        total,
        listed: total,
        done: total,
        succeeded: total,
        failed: 0,
        mismatched: 0,
        canceled: 0,
        pending: 0,
      });
      const bytes = Object.values(files).reduce((sum, data) => sum + data.length, 0) + 24 * MiB;
      expect(batch.bytes.done).toBe(bytes);
      expect(await batchRows()).toEqual([{ id: created.id, status: 'succeeded', listed: total }]);

      // One row per line, in manifest order, each with one result; the big one's from its job.
      const { rows } = await env.db.query<{ n: number; seqs: number; names: number; ok: number }>(
        `SELECT count(*)::int AS n, count(DISTINCT seq)::int AS seqs,
                count(DISTINCT name)::int AS names,
                count(*) FILTER (WHERE status = 'succeeded' AND digests IS NOT NULL)::int AS ok
           FROM batch_items WHERE batch_id = $1`,
        [created.id],
      );
      expect(rows[0]).toEqual({ n: total, seqs: total, names: total, ok: total });
      const jobs = await env.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs`);
      expect(jobs.rows[0].n).toBe(1);

      const items: ItemBody[] = [];
      let cursor: string | null = null;
      do {
        const page: { items: ItemBody[]; nextCursor: string | null } = await getJson(
          api,
          `/v1/batches/${created.id}/items?limit=1000${cursor ? `&cursor=${cursor}` : ''}`,
        );
        items.push(...page.items);
        cursor = page.nextCursor;
      } while (cursor);
      expect(items.map((item) => item.name)).toEqual(paths);
      const big = items[items.length - 1];
      expect(big.jobId).not.toBeNull();
      expect(big.digests!.sha256.hex).toBe(await fileDigest('sha256', bigPath));
      for (const item of items.slice(0, -1)) {
        expect(item.digests!.sha256.hex).toBe(sha256(files[item.name.slice(dir.length + 1)]));
      }

      // The report, checked by coreutils.
      const report = await fetch(`${api.url}/v1/batches/${created.id}/report?format=sha256sum`, {
        headers: env.env.auth,
      });
      expect(report.status).toBe(200);
      const reportPath = join(env.dataDir, 'report.sha256');
      await writeFile(reportPath, Buffer.from(await report.arrayBuffer()));
      const check = await run('sha256sum', ['-c', reportPath], { maxBuffer: 64 * MiB });
      expect(check.stdout.split('\n').filter((line) => line.endsWith(': OK'))).toHaveLength(total);
      expect((await readFile(reportPath, 'utf8')).split('\n').filter(Boolean)).toHaveLength(total);
    },
    TIMEOUT,
  );
});
