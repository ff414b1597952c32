/**
 * Hash states sealed at rest (AES-256-GCM, HASHQ_STATE_KEYS), with real worker processes:
 * - a state moved to another job, a flipped byte, a state sealed with a key the worker does not
 *   hold, a checkpoint fence altered: each job fails with STATE_INVALID (never a digest), while the
 *   untouched checkpoints beside them resume to Node's digest;
 * - keys rotated mid-job: a worker crashed under key A, the next one runs with "B,A", resumes from
 *   the A-sealed state and seals its checkpoints with B; the digest equals Node's;
 * - no plaintext input anywhere in the database (pg_dump of the test database) after a finished job
 *   and with a crashed job's checkpoint on record;
 * - every path that ends a job deletes its states (API cancel, reconciler, the worker's ends);
 * - the migration refuses to run without a key when plaintext states exist, and seals them.
 */
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import type { StateKey } from '@hashq/config';
import { jobStateBinding, readSealedHeader, StateSealer } from '@hashq/crypto';
import { dataSourceOptions, runMigrations } from '@hashq/database';
import { JobsRepository, type LeasedJob } from '@hashq/jobs';
import { createHasher } from '@hashq/native';
import { fileVersion } from '@hashq/sources';
import request from 'supertest';
import { DataSource } from 'typeorm';

import { CheckpointStore } from '../apps/worker/src/checkpoint-store';
import { createApiApp } from './helpers/api';
import { stateKeysEnv, testStateKey } from './helpers/env';
import { PlaintextScan } from './helpers/plaintext-scan';
import { fileDigest, MiB, WorkerTestEnv } from './helpers/worker-process';

const settings = {
  CHUNK_BYTES: String(MiB),
  CHECKPOINT_BYTES: String(4 * MiB),
  CHECKPOINT_SECONDS: '3600',
};
const isFinished = (job: { status: string }) => job.status !== 'queued' && job.status !== 'running';

/** The worker's own store (sealing included) in this process, to write checkpoints and end jobs. */
class InProcessStore {
  private constructor(
    readonly dataSource: DataSource,
    readonly store: CheckpointStore,
  ) {}

  static async open(env: WorkerTestEnv, keys: StateKey[]): Promise<InProcessStore> {
    const dataSource = await new DataSource(dataSourceOptions(env.env.config)).initialize();
    return new InProcessStore(
      dataSource,
      new CheckpointStore(dataSource, env.env.schema, new StateSealer(keys), 30),
    );
  }

  /**
   * What a worker leaves when it stops gracefully at `offset`: real states of the file's first
   * `offset` bytes, sealed by CheckpointStore.save, the job back to 'queued'.
   */
  async checkpoint(
    id: string,
    path: string,
    offset: number,
    algorithms = ['sha256'],
  ): Promise<LeasedJob> {
    const leased = (await new JobsRepository(this.dataSource).lease(id, 'test', 30))!;
    const head = (await readFile(path)).subarray(0, offset);
    const states = new Map(
      algorithms.map((name) => {
        const hasher = createHasher(name);
        hasher.update(head);
        return [name, Buffer.from(hasher.serialize())];
      }),
    );
    const sourceVersion = fileVersion(await stat(path, { bigint: true }));
    await this.store.save(leased, { offset, bytesRead: offset, sourceVersion, states }, true);
    return leased;
  }

  close(): Promise<void> {
    return this.dataSource.destroy();
  }
}

describe('sealed hash states', () => {
  const env = new WorkerTestEnv();
  beforeAll(() => env.setUp());
  afterAll(() => env.tearDown());

  it('refuses a moved, altered, foreign-key or re-fenced state with STATE_INVALID; intact ones resume', async () => {
    const OFFSET = 3 * MiB + 5; // mid-block: the states hold a plaintext tail
    const names = ['a', 'moved', 'flipped', 'foreign', 'intact', 'refenced'];
    const paths = await Promise.all(names.map((name) => env.createFile(`${name}.bin`, 8)));
    const ids: string[] = [];
    for (const path of paths) ids.push(await env.submit(path, ['sha256']));
    const [a, moved, flipped, foreign, intact, refenced] = ids;
    const own = await InProcessStore.open(env, [env.env.stateKey]);
    const retired = await InProcessStore.open(env, [testStateKey('retired')]);
    try {
      for (const [index, id] of [a, moved, flipped, foreign, intact, refenced].entries()) {
        await (id === foreign ? retired : own).checkpoint(id, paths[index], OFFSET);
      }
    } finally {
      await Promise.all([own.close(), retired.close()]);
    }
    // a's state over b's: same algorithm, offset and fence; only the job differs. Opened, it would
    // continue b's file from a's bytes: a wrong digest.
    await env.db.query(
      `UPDATE job_states SET state = (SELECT state FROM job_states WHERE job_id = $1 AND algorithm = 'sha256')
        WHERE job_id = $2`,
      [a, moved],
    );
    await env.db.query(
      `UPDATE job_states SET state = set_byte(state, 40, get_byte(state, 40) # 1) WHERE job_id = $1`,
      [flipped],
    );
    await env.db.query(`UPDATE jobs SET checkpoint_fence = checkpoint_fence - 1 WHERE id = $1`, [
      refenced,
    ]);

    const worker = env.startWorker(settings);
    const done = new Map<string, Awaited<ReturnType<typeof env.job>>>();
    for (const id of ids) done.set(id, await env.waitForJob(id, isFinished, worker));
    await worker.stop();

    for (const [id, path] of [
      [a, paths[0]],
      [intact, paths[4]],
    ]) {
      const job = done.get(id)!;
      const digest = await fileDigest('sha256', path);
      expect([job.status, job.resumes, job.digests?.sha256.hex]).toEqual(['succeeded', 1, digest]);
    }
    const refused = new Map<string, RegExp>([
      [moved, /does not authenticate with key "t[0-9a-f]+"/],
      [flipped, /does not authenticate with key "t[0-9a-f]+"/],
      [foreign, /state sealed with key "retired", which HASHQ_STATE_KEYS does not list/],
      [refenced, /does not authenticate .* fence 0$/],
    ]);
    for (const [id, message] of refused) {
      const job = done.get(id)!;
      expect([job.status, job.error_code, job.digests]).toEqual(['failed', 'STATE_INVALID', null]);
      expect(job.error_message).toMatch(message);
      expect((await env.states(id)).size).toBe(0); // the failure deleted them
    }
  });

  it('rotates keys mid-job: crashed under A, resumed under "B,A", later checkpoints sealed with B', async () => {
    const A = testStateKey('key-a');
    const B = testStateKey('key-b');
    const path = await env.createFile('rotate.bin', 48);
    const id = await env.submit(path, ['sha256', 'sha512']);

    const first = await env.startWorkerHeldAtCheckpoint(id, {
      ...settings,
      HASHQ_STATE_KEYS: stateKeysEnv(A),
    });
    first.worker.kill('SIGKILL');
    await first.worker.exited;
    await env.waitForWorkerSessionsGone();
    const underA = await env.states(id);
    expect([...underA.values()].map((state) => readSealedHeader(state).keyId)).toEqual([
      'key-a',
      'key-a',
    ]);

    const lock = await env.lockTable('job_states');
    const second = env.startWorker({ ...settings, HASHQ_STATE_KEYS: stateKeysEnv(B, A) });
    await lock.waitForWaiter(second); // resumed from the A-sealed state; its first checkpoint waits
    second.kill('SIGSTOP');
    await lock.release();
    const resumed = await env.waitForJob(
      id,
      (job) => job.checkpoint_offset > first.checkpointed.checkpoint_offset,
    );
    const underB = await env.states(id);
    second.kill('SIGCONT');
    expect([...underB.values()].map((state) => readSealedHeader(state).keyId)).toEqual([
      'key-b',
      'key-b',
    ]);
    expect(resumed.fence).toBe(2);

    const done = await env.waitForJob(id, isFinished, second);
    expect([done.status, done.resumes, done.digests?.sha256.hex, done.digests?.sha512.hex]).toEqual(
      ['succeeded', 1, await fileDigest('sha256', path), await fileDigest('sha512', path)],
    );
    expect((await env.states(id)).size).toBe(0);
    await second.stop();
  });

  it('leaves no plaintext input in the database: finished job, crashed job with a checkpoint', async () => {
    const scan = new PlaintextScan();
    const path = join(env.dataDir, 'marker.bin');
    await writeFile(path, scan.input(24 * MiB));
    const found = (text: string) => scan.found(text);
    const dump = () => scan.dump(env.env.databaseUrl);
    // Chunks of 1 MiB - 1 byte: checkpoints fall mid-block, so each state holds a tail of input.
    const odd = { ...settings, CHUNK_BYTES: String(MiB - 1) };
    const algorithms = ['sha256', 'md5', 'sha3-256'];

    const finished = await env.submit(path, algorithms);
    const worker = env.startWorker(odd);
    expect((await env.waitForJob(finished, isFinished, worker)).status).toBe('succeeded');
    await worker.stop();
    const crashed = await env.submit(path, algorithms);
    const held = await env.startWorkerHeldAtCheckpoint(crashed, odd);
    held.worker.kill('SIGKILL');
    await held.worker.exited;
    await env.waitForWorkerSessionsGone();
    const checkpoint = await env.job(crashed);
    expect([checkpoint.status, (await env.states(crashed)).size]).toEqual(['running', 3]);

    expect(found(await dump())).toBe(false);

    // The search would see these states unsealed: plant one and dump again.
    const hasher = createHasher('sha256');
    hasher.update((await readFile(path)).subarray(0, checkpoint.checkpoint_offset));
    const plaintext = Buffer.from(hasher.serialize());
    expect(found(plaintext.toString('latin1'))).toBe(true);
    await env.db.query(
      `INSERT INTO job_states (job_id, algorithm, state) VALUES ($1, 'planted', $2)`,
      [finished, plaintext],
    );
    expect(found(await dump())).toBe(true);
    await env.db.query(`DELETE FROM job_states WHERE job_id = $1`, [finished]);
  });

  it('deletes the states on every path that ends a job; a release keeps them', async () => {
    const path = await env.createFile('ends.bin', 2);
    const local = await InProcessStore.open(env, [env.env.stateKey]);
    const api = await createApiApp(env.env);
    const count = async (id: string) => (await env.states(id)).size;
    try {
      const { store } = local;
      const jobs = new JobsRepository(local.dataSource);
      const checkpointed = async () => {
        const id = await env.submit(path, ['sha256', 'md5']);
        await local.checkpoint(id, path, MiB + 1, ['sha256', 'md5']);
        expect([(await env.job(id)).status, await count(id)]).toEqual(['queued', 2]); // handed back: kept
        return id;
      };
      const leased = async (id: string) => (await jobs.lease(id, 'test', 30))!;
      const result = {
        status: 'succeeded' as const,
        digests: {},
        totalBytes: 2 * MiB,
        bytesRead: 2 * MiB,
      };
      const ends: Array<[string, (id: string) => Promise<unknown>]> = [
        [
          'canceled',
          (id) => request(api.getHttpServer()).post(`/v1/jobs/${id}/cancel`).expect(200),
        ],
        ['failed', (id) => jobs.failExhausted(id, 1)], // the reconciler
        ['failed', (id) => jobs.failExhaustedOnLease(id, 1)], // a worker refusing the lease
        [
          'failed',
          async (id) =>
            store.fail(await leased(id), { code: 'SOURCE_CHANGED', message: 'changed' }, 0),
        ],
        ['canceled', async (id) => store.cancel(await leased(id), 0)],
        ['succeeded', async (id) => store.finish(await leased(id), result)],
      ];
      for (const [status, end] of ends) {
        const id = await checkpointed();
        await end(id);
        expect([(await env.job(id)).status, await count(id)]).toEqual([status, 0]);
      }
      const released = await checkpointed();
      await store.requeue(await leased(released), { code: 'INTERNAL_ERROR', message: 'retry' }, 0);
      expect([(await env.job(released)).status, await count(released)]).toEqual(['queued', 2]);
    } finally {
      await api.close();
      await local.close();
    }
  });
});

describe('the migration that seals stored states', () => {
  const env = new WorkerTestEnv();
  beforeAll(() => env.setUp());
  afterAll(() => env.tearDown());

  it('refuses without a key, seals with one (finished jobs lose theirs), and the worker resumes', async () => {
    const config = env.env.config;
    const path = await env.createFile('legacy.bin', 6);
    const OFFSET = 2 * MiB + 7;
    // Back to the schema before sealing (the downs of SealJobStates and of every later migration, on
    // empty tables), then what an earlier version left: a plaintext checkpoint of an unfinished job,
    // and states of a canceled one.
    const dataSource = await new DataSource(dataSourceOptions(config)).initialize();
    const later = dataSource.migrations.length;
    const sealing = dataSource.migrations.findIndex((m) => m.name === 'SealJobStates1796300000000');
    for (let undone = sealing; undone < later; undone++)
      await dataSource.undoLastMigration({ transaction: 'each' });
    await dataSource.destroy();
    const resumable = await env.submit(path, ['sha256']);
    const canceled = await env.submit(path, ['sha256']);
    const hasher = createHasher('sha256');
    hasher.update((await readFile(path)).subarray(0, OFFSET));
    const plaintext = Buffer.from(hasher.serialize());
    const version = JSON.stringify(fileVersion(await stat(path, { bigint: true })));
    await env.db.query(
      `UPDATE jobs SET fence = 3, attempts = 3, checkpoint_offset = $2, bytes_done = $2, bytes_read = $2,
              source_version = $3
        WHERE id = $1`,
      [resumable, OFFSET, version],
    );
    await env.db.query(
      `UPDATE jobs SET status = 'canceled', fence = 1, checkpoint_offset = $2 WHERE id = $1`,
      [canceled, OFFSET],
    );
    for (const id of [resumable, canceled]) {
      await env.db.query(
        `INSERT INTO job_states (job_id, algorithm, state) VALUES ($1, 'sha256', $2)`,
        [id, plaintext],
      );
    }

    const keyless = { databaseUrl: config.databaseUrl, databaseSchema: config.databaseSchema };
    await expect(runMigrations(keyless)).rejects.toThrow(
      /^job_states holds 1 plaintext hash state\(s\) of unfinished jobs to seal, which needs HASHQ_STATE_KEYS/,
    );
    expect((await env.states(resumable)).get('sha256')).toEqual(plaintext); // nothing changed
    expect((await env.states(canceled)).get('sha256')).toEqual(plaintext);

    const applied = await runMigrations(config);
    expect(applied.slice(0, 2)).toEqual([
      'SealJobStates1796300000000',
      'SealSessionStates1796400000000',
    ]);
    expect(applied).toHaveLength(later - sealing);
    expect((await env.states(canceled)).size).toBe(0);
    const sealed = (await env.states(resumable)).get('sha256')!;
    expect(readSealedHeader(sealed).keyId).toBe(env.env.stateKey.id);
    expect(sealed.includes(plaintext.subarray(24, 31))).toBe(false);
    const binding = jobStateBinding(resumable, 'sha256', OFFSET, 3);
    expect(new StateSealer(config.stateKeys).open(sealed, binding)).toEqual(plaintext);
    const { rows } = await env.db.query(`SELECT checkpoint_fence FROM jobs WHERE id = $1`, [
      resumable,
    ]);
    expect(Number(rows[0].checkpoint_fence)).toBe(3);

    const worker = env.startWorker(settings);
    const done = await env.waitForJob(resumable, isFinished, worker);
    await worker.stop();
    const digest = await fileDigest('sha256', path);
    expect([done.status, done.resumes, done.digests?.sha256.hex]).toEqual(['succeeded', 1, digest]);
  });
});
