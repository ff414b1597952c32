/**
 * Test harness for the worker: real child processes (node dist/apps/worker/main.js)
 * against the machine's PostgreSQL and Redis, isolated per suite by the shared
 * TestEnv (./env.ts). Needs `npm run build` first (npm test does it).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

import { projectRoot } from '@hashq/config';
import { HASH_QUEUE, hashJobOptions } from '@hashq/jobs';
import { Queue } from 'bullmq';
import { Client } from 'pg';

import { createTestEnv, type TestEnv } from './env';

export const REPO_ROOT = projectRoot();
/** The built worker; HASHQ_TEST_WORKER_MAIN points elsewhere (e.g. a private build while dist/ is being rebuilt). */
export const WORKER_MAIN =
  process.env.HASHQ_TEST_WORKER_MAIN ?? join(REPO_ROOT, 'dist', 'apps', 'worker', 'main.js');
export const MiB = 1024 * 1024;

export type LogLine = Record<string, unknown> & { msg?: string };

/** One worker child process (or another app's `main`, e.g. the API's) with its parsed JSON log lines. */
export class WorkerProcess {
  readonly lines: LogLine[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly waiters = new Set<() => void>();
  private readonly child: ChildProcess;

  constructor(env: Record<string, string>, main = WORKER_MAIN) {
    if (!existsSync(main)) throw new Error(`${main} is missing: run "npm run build" first`);
    this.child = spawn(process.execPath, [main], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    for (const stream of [this.child.stdout!, this.child.stderr!]) {
      createInterface({ input: stream }).on('line', (text) => this.onLine(text));
    }
    this.exited = new Promise((resolveExit) =>
      this.child.once('exit', (code, signal) => {
        resolveExit({ code, signal });
        this.notify();
      }),
    );
  }

  get pid(): number {
    return this.child.pid!;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** Resolves with the first log line (past or future) that matches; rejects on exit or timeout. */
  waitForLog(match: (line: LogLine) => boolean, timeoutMs = 30_000): Promise<LogLine> {
    return new Promise((resolveLine, reject) => {
      const check = (): boolean => {
        const found = this.lines.find(match);
        if (found) {
          finish();
          resolveLine(found);
          return true;
        }
        if (!this.running) {
          finish();
          reject(
            new Error(`worker ${this.pid} exited before the expected log line:\n${this.tail()}`),
          );
          return true;
        }
        return false;
      };
      const timer = setTimeout(() => {
        finish();
        reject(
          new Error(`timed out waiting for a log line of worker ${this.pid}:\n${this.tail()}`),
        );
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        this.waiters.delete(waiter);
      };
      const waiter = () => void check();
      this.waiters.add(waiter);
      check();
    });
  }

  /** SIGTERM (or the given signal) and wait for the exit; SIGKILL if it takes longer than the timeout. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 15_000) {
    if (!this.running) return this.exited;
    this.kill(signal);
    const timer = setTimeout(() => this.kill('SIGKILL'), timeoutMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  tail(count = 15): string {
    return this.lines
      .slice(-count)
      .map((line) => JSON.stringify(line))
      .join('\n');
  }

  private onLine(text: string): void {
    try {
      this.lines.push(JSON.parse(text) as LogLine);
    } catch {
      this.lines.push({ msg: text, raw: true });
    }
    this.notify();
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}

/**
 * A table of the test's own database locked IN SHARE MODE from a session of the test: reads go
 * on, writes wait. It holds a worker at a known point by construction, not by timing: with
 * job_states locked before the worker gets there, its first checkpoint write waits on the lock,
 * its hashing stops at the checkpoint lag bound (CHECKPOINT_BYTES past the last committed
 * checkpoint, plus a chunk), and it can neither finish the job (the final write deletes the
 * states) nor commit another checkpoint until release(). With jobs locked, every fenced write
 * (heartbeat, checkpoint, finish) waits.
 */
export class TableLock {
  private constructor(
    private readonly env: WorkerTestEnv,
    private readonly client: Client,
    /** The locking session's backend pid (spare it when terminating the others). */
    readonly pid: number,
  ) {}

  static async take(env: WorkerTestEnv, table: 'jobs' | 'job_states'): Promise<TableLock> {
    const client = new Client({ connectionString: env.env.databaseUrl });
    client.on('error', () => undefined); // a session ended by the test's own tear-down
    await client.connect();
    try {
      const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]
        .pid;
      await client.query('BEGIN');
      await client.query(`LOCK TABLE ${table} IN SHARE MODE`);
      return new TableLock(env, client, pid);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
  }

  /** Sessions (other than this one) waiting on a lock: a worker's write held by this one. */
  async waiters(): Promise<number> {
    const { rows } = await this.env.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> $1`,
      [this.pid],
    );
    return rows[0].n;
  }

  /** Resolves once a write waits on the lock; fails early when the worker exits. */
  async waitForWaiter(worker?: WorkerProcess, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while ((await this.waiters()) === 0) {
      if (worker && !worker.running)
        throw new Error(
          `worker ${worker.pid} exited before a write waited on the lock:\n${worker.tail()}`,
        );
      if (Date.now() > deadline)
        throw new Error(
          `no write waited on the lock within ${timeoutMs} ms${worker ? `:\n${worker.tail()}` : ''}`,
        );
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** A statement in the locking transaction: others see it once commit() ends the lock. */
  async query(sql: string, params: unknown[] = []): Promise<void> {
    await this.client.query(sql, params);
  }

  /** Commits what query() wrote and ends the session, and the lock with it. */
  async commit(): Promise<void> {
    await this.client.query('COMMIT');
    await this.release();
  }

  /** Ends the session: its transaction, and the lock, end with it (idempotent). */
  async release(): Promise<void> {
    await this.client.end().catch(() => undefined);
  }
}

export interface JobRow {
  id: string;
  status: string;
  fence: number;
  attempts: number;
  resumes: number;
  total_bytes: number | null;
  bytes_done: number;
  bytes_read: number;
  checkpoint_offset: number;
  source_version: Record<string, unknown> | null;
  cancel_requested: boolean;
  lease_owner: string | null;
  digests: Record<string, { hex: string; base64: string }> | null;
  error_code: string | null;
  error_message: string | null;
  error_details: unknown;
  updated_at: Date;
}

/**
 * The shared TestEnv (own database with the migrations, own queue prefix, own
 * file root) plus what worker tests need: a SQL client, the queue, and the
 * worker processes they start (all SIGKILLed at tear-down).
 */
export class WorkerTestEnv {
  env!: TestEnv;
  db!: Client;
  queue!: Queue;
  private readonly workers: WorkerProcess[] = [];
  private readonly locks: TableLock[] = [];

  get dataDir(): string {
    return this.env.fileRoot;
  }

  async setUp(): Promise<void> {
    this.env = await createTestEnv();
    this.db = new Client({ connectionString: this.env.databaseUrl });
    await this.db.connect();
    this.queue = new Queue(HASH_QUEUE, {
      connection: { url: this.env.redisUrl },
      prefix: this.env.queuePrefix,
    });
  }

  async tearDown(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.stop('SIGKILL')));
    await Promise.all(this.locks.map((lock) => lock.release()));
    await this.queue?.close();
    await this.db?.end();
    await this.env?.cleanup();
  }

  /** Environment of a worker process of this test (extra entries override). */
  workerEnv(extra: Record<string, string> = {}): Record<string, string> {
    return {
      ...this.env.env,
      LOG_LEVEL: 'info', // the tests follow the worker through its log lines
      // A killed worker's job is picked up again within a few seconds, not a minute.
      WORKER_LOCK_DURATION_MS: '2000',
      WORKER_STALLED_INTERVAL_MS: '1000',
      // Several workers run at once: no metrics endpoint unless a test asks for one on a free port.
      WORKER_METRICS_PORT: '0',
      ...extra,
    };
  }

  startWorker(extra: Record<string, string> = {}): WorkerProcess {
    const worker = new WorkerProcess(this.workerEnv(extra));
    this.workers.push(worker);
    return worker;
  }

  /** Locks a table of this test's database (see TableLock); released at tear-down at the latest. */
  async lockTable(table: 'jobs' | 'job_states'): Promise<TableLock> {
    const lock = await TableLock.take(this, table);
    this.locks.push(lock);
    return lock;
  }

  /** Inserts a queued job row the way the API does and enqueues it. */
  async submit(
    path: string,
    algorithms: string[],
    options: Record<string, unknown> = {},
  ): Promise<string> {
    const { rows } = await this.db.query<{ id: string }>(
      `INSERT INTO jobs (status, source, algorithms, options)
       VALUES ('queued', $1, $2, $3) RETURNING id`,
      [JSON.stringify({ type: 'file', path }), algorithms, JSON.stringify(options)],
    );
    const id = rows[0].id;
    await this.queue.add(HASH_QUEUE, { jobId: id }, hashJobOptions(id));
    return id;
  }

  async job(id: string): Promise<JobRow> {
    const { rows } = await this.db.query(`SELECT * FROM jobs WHERE id = $1`, [id]);
    const row = rows[0];
    for (const column of [
      'fence',
      'total_bytes',
      'bytes_done',
      'bytes_read',
      'checkpoint_offset',
    ]) {
      if (row[column] !== null) row[column] = Number(row[column]);
    }
    return row as JobRow;
  }

  async states(id: string): Promise<Map<string, Buffer>> {
    const { rows } = await this.db.query<{ algorithm: string; state: Buffer }>(
      `SELECT algorithm, state FROM job_states WHERE job_id = $1`,
      [id],
    );
    return new Map(rows.map((row) => [row.algorithm, row.state]));
  }

  /**
   * Polls PostgreSQL (the system of record, never Redis) until the job matches;
   * fails early when the worker expected to get it there has exited.
   */
  async waitForJob(
    id: string,
    match: (job: JobRow) => boolean,
    worker?: WorkerProcess,
    timeoutMs = 45_000,
  ): Promise<JobRow> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const row = await this.job(id);
      if (match(row)) return row;
      if (worker && !worker.running)
        throw new Error(
          `worker ${worker.pid} exited; job ${id}: ${JSON.stringify(row)}\n${worker.tail()}`,
        );
      if (Date.now() > deadline)
        throw new Error(`job ${id} did not reach the expected state: ${JSON.stringify(row)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /**
   * Waits until no other session of the test's database runs a statement (a worker's, or a killed
   * API's): what a frozen (SIGSTOP) worker had sent has committed or failed, and nothing more of
   * it can land while it stays frozen.
   * A session left "idle in transaction" (frozen between two statements of a transaction) counts
   * as done: nothing of it is visible, and it cannot commit until the worker runs again.
   */
  waitForWorkerStatementsDone(timeoutMs = 10_000): Promise<void> {
    return this.waitForNoOtherSessions(`state = 'active'`, 'busy', 20, timeoutMs);
  }

  /**
   * Waits until no worker session is connected to the test's database (the killed workers' ones
   * have ended). Workers connect as `hashq-worker`; an API app of the test keeps connections of
   * its own open (its webhook deliverer polls), which are not waited for.
   */
  waitForWorkerSessionsGone(timeoutMs = 10_000): Promise<void> {
    return this.waitForNoOtherSessions(`application_name = 'hashq-worker'`, 'open', 50, timeoutMs);
  }

  /** Polls pg_stat_activity until no session of the test's database but this one matches `where`. */
  private async waitForNoOtherSessions(
    where: string,
    what: string,
    pollMs: number,
    timeoutMs: number,
  ): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { rows } = await this.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND ${where}`,
      );
      if (rows[0].n === 0) return;
      if (Date.now() > deadline) throw new Error(`${rows[0].n} sessions still ${what}`);
      await new Promise((r) => setTimeout(r, pollMs));
    }
  }

  /**
   * Starts a worker and holds it mid-job with a checkpoint on record, by construction rather than
   * by racing its hashing: job_states is locked before it starts, so its first checkpoint write
   * waits and its hashing stops at the checkpoint lag bound (it cannot finish); it is frozen
   * (SIGSTOP), the lock released (that checkpoint commits) and the row read once it shows the
   * checkpoint. The worker is returned still frozen: the caller sends SIGCONT or SIGKILL.
   */
  async startWorkerHeldAtCheckpoint(
    id: string,
    extra: Record<string, string> = {},
  ): Promise<{ worker: WorkerProcess; checkpointed: JobRow }> {
    const states = await this.lockTable('job_states');
    const worker = this.startWorker(extra);
    await states.waitForWaiter(worker);
    worker.kill('SIGSTOP');
    await states.release();
    const checkpointed = await this.waitForJob(id, (job) => job.checkpoint_offset > 0, worker);
    return { worker, checkpointed };
  }

  /**
   * A file of `mib` MiB made of one random MiB repeated (cheap to write, not
   * sparse); different blocks at different offsets would not make the test stronger
   * than a digest compared with Node's crypto over the very same bytes.
   */
  async createFile(name: string, mib: number): Promise<string> {
    const path = join(this.dataDir, name);
    const block = randomBytes(MiB);
    const handle = await open(path, 'w');
    try {
      for (let i = 0; i < mib; i++) {
        block.writeUInt32BE(i, 0); // every MiB differs, so a wrong offset changes the digest
        await handle.write(block, 0, block.length);
      }
    } finally {
      await handle.close();
    }
    return path;
  }
}

/** Node's crypto over a whole file: the independent oracle. */
export async function fileDigest(algorithm: string, path: string): Promise<string> {
  const hash = createHash(algorithm);
  for await (const chunk of createReadStream(path, { highWaterMark: 8 * MiB }))
    hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** A job that has ended either way (a waitForJob predicate). */
export const hasFinished = (job: JobRow): boolean =>
  job.status === 'succeeded' || job.status === 'failed';

export const isCheckpoint =
  (minOffset = 0) =>
  (line: LogLine) =>
    line.msg === 'checkpoint saved' && typeof line.offset === 'number' && line.offset >= minOffset;
