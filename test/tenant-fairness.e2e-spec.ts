/**
 * Fairness between tenants (issue 15, docs/tenants.md): a tenant's max_running_jobs is admission
 * in PostgreSQL, so one tenant's long queue neither exceeds its limit nor keeps another tenant's
 * job waiting behind it; a SIGKILLed worker leaks no slot. Real API service, real worker processes,
 * digests compared with Node's crypto. Every assertion is a count, never a duration.
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import {
  AdmissionSweeper,
  HASH_QUEUE,
  hashJobOptions,
  JobQueueReconciler,
  TenantsRepository,
} from '@hashq/jobs';
import type { INestApplication } from '@nestjs/common';
import type { Client } from 'pg';

import { JobsService } from '../apps/api/src/jobs/jobs.service';
import { createApiApp } from './helpers/api';
import { fileDigest, MiB, WorkerTestEnv } from './helpers/worker-process';

/** Polls the running jobs of a tenant until stopped; keeps the largest count seen. */
class RunningSampler {
  max = 0;
  samples = 0;
  private stopped = false;
  private readonly loop: Promise<void>;

  constructor(
    private readonly db: Client,
    private readonly tenantId: string,
  ) {
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const { rows } = await this.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM jobs WHERE tenant_id = $1 AND status = 'running'`,
        [this.tenantId],
      );
      this.max = Math.max(this.max, rows[0].n);
      this.samples++;
      await new Promise((r) => setTimeout(r, 5));
    }
  }
}

/**
 * The most jobs of the tenant that were ever running at once, from the recorded history: at the
 * start of each job, the jobs started and not yet finished. A slot passes on only after the
 * statement that ends a job has committed, so a successor's start is always after that end.
 */
async function maxOverlap(db: Client, tenantId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT coalesce(max(overlap), 0)::int AS n FROM (
       SELECT (SELECT count(*) FROM jobs o
                WHERE o.tenant_id = j.tenant_id AND o.started_at <= j.started_at
                  AND (o.finished_at IS NULL OR o.finished_at > j.started_at)) AS overlap
         FROM jobs j WHERE j.tenant_id = $1 AND j.started_at IS NOT NULL) AS starts`,
    [tenantId],
  );
  return rows[0].n;
}

describe('tenant fairness: max_running_jobs', () => {
  const env = new WorkerTestEnv();
  let app: INestApplication;
  let jobs: JobsService;
  const files = new Map<string, string>(); // job id → path

  beforeAll(async () => {
    await env.setUp();
    app = await createApiApp(env.env);
    jobs = app.get(JobsService);
    const tenants = app.get(TenantsRepository);
    await tenants.create({ id: 'a', name: 'A', maxRunningJobs: 2 });
    await tenants.create({ id: 'b', name: 'B' });
    await tenants.create({ id: 'c', name: 'C', maxRunningJobs: 2 });
  });

  afterAll(async () => {
    await app?.close();
    await env.tearDown();
  });

  async function submit(tenantId: string, path: string): Promise<string> {
    const { job } = await jobs.submit(
      { source: { type: 'file', path }, algorithms: ['sha256'] },
      undefined,
      tenantId,
    );
    files.set(job.id, path);
    return job.id;
  }

  async function count(where: string, params: unknown[]): Promise<number> {
    const { rows } = await env.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM jobs WHERE ${where}`,
      params,
    );
    return rows[0].n;
  }

  async function waitForTenantDone(tenantId: string, total: number): Promise<void> {
    for (;;) {
      const done = await count(`tenant_id = $1 AND status = 'succeeded'`, [tenantId]);
      if (done === total) return;
      const failed = await count(`tenant_id = $1 AND status IN ('failed', 'canceled')`, [tenantId]);
      if (failed > 0) throw new Error(`${failed} jobs of tenant ${tenantId} did not succeed`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async function expectDigests(tenantId: string): Promise<void> {
    const { rows } = await env.db.query<{ id: string; digests: { sha256: { hex: string } } }>(
      `SELECT id, digests FROM jobs WHERE tenant_id = $1`,
      [tenantId],
    );
    for (const row of rows) {
      expect([row.id, row.digests.sha256.hex]).toEqual([
        row.id,
        await fileDigest('sha256', files.get(row.id)!),
      ]);
    }
  }

  it('admission without a worker: held jobs stay out of BullMQ until a slot frees', async () => {
    await app.get(TenantsRepository).create({ id: 'd', name: 'D', maxRunningJobs: 1 });
    const path = join(env.dataDir, 'd.bin');
    await writeFile(path, 'tenant d');
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await submit('d', path));
    const inQueue = async () =>
      (await env.queue.getJobs(['wait', 'prioritized', 'active'])).map((job) => job.id).sort();
    const admitted = async () =>
      (
        await env.db.query<{ id: string }>(
          `SELECT id FROM jobs WHERE tenant_id = 'd' AND admission = 'admitted' AND status = 'queued' ORDER BY id`,
        )
      ).rows.map((row) => row.id);
    expect(await inQueue()).toEqual([ids[0]]);

    // The reconciler (after a Redis loss) puts back admitted jobs only.
    await env.queue.drain();
    expect(await inQueue()).toEqual([]);
    await app.get(JobQueueReconciler).reconcile();
    expect(await inQueue()).toEqual([ids[0]]);

    // Canceling the admitted job hands its slot on at once.
    await jobs.cancel(ids[0]);
    expect(await admitted()).toEqual([ids[1]]);
    expect(await inQueue()).toEqual([ids[1]]);

    // A job that ended while its process died before the fill: the sweep admits the next.
    await env.db.query(`UPDATE jobs SET status = 'succeeded', finished_at = now() WHERE id = $1`, [
      ids[1],
    ]);
    await env.queue.remove(ids[1]);
    expect(await admitted()).toEqual([]);
    await app.get(AdmissionSweeper).sweep();
    expect(await admitted()).toEqual([ids[2]]);

    // A raised limit admits more at the next fill; nothing beyond it.
    await env.db.query(`UPDATE tenants SET max_running_jobs = 5 WHERE id = 'd'`);
    await app.get(AdmissionSweeper).sweep();
    expect(await admitted()).toEqual([ids[2], ids[3]].sort());
    expect(await inQueue()).toEqual([ids[2], ids[3]].sort());
    for (const id of ids.slice(2)) await jobs.cancel(id);
    await env.queue.drain();
  });

  // The timeout: 500 jobs through 2 slots on a shared 2-core machine may take minutes (no
  // assertion is about time).
  it("A's 500 queued jobs run 2 at a time, and B's one job does not wait behind them", async () => {
    const paths: string[] = [];
    for (let i = 0; i < 501; i++) {
      const path = join(env.dataDir, `small-${i}.bin`);
      await writeFile(path, randomBytes(1 + ((i * 7919) % 65536)));
      paths.push(path);
    }
    for (const path of paths.slice(0, 500)) await submit('a', path);
    const b = await submit('b', paths[500]);

    // Admission, before any worker runs: A has 2 jobs in BullMQ and 498 held in PostgreSQL.
    expect(await count(`tenant_id = 'a' AND admission = 'admitted'`, [])).toBe(2);
    expect(await count(`tenant_id = 'a' AND admission = 'held'`, [])).toBe(498);
    expect((await env.queue.getJobCounts('wait', 'prioritized')).wait).toBe(3);
    // A held job put into BullMQ behind admission's back does not run before it is admitted.
    const { rows: held } = await env.db.query<{ id: string }>(
      `SELECT id FROM jobs WHERE tenant_id = 'a' AND admission = 'held' ORDER BY created_at DESC LIMIT 1`,
    );
    await env.queue.add(HASH_QUEUE, { jobId: held[0].id }, hashJobOptions(held[0].id));

    const sampler = new RunningSampler(env.db, 'a');
    const worker = env.startWorker({ WORKER_CONCURRENCY: '4', RECONCILE_SECONDS: '2' });
    const bDone = await env.waitForJob(b, (job) => job.status === 'succeeded');
    const bStarted = await env.db.query<{ started_at: Date }>(
      `SELECT started_at FROM jobs WHERE id = $1`,
      [b],
    );
    // B ran right after the 2 A jobs that were in BullMQ before it, not after A's 500.
    const aStartedBeforeB = await count(`tenant_id = 'a' AND started_at < $1`, [
      bStarted.rows[0].started_at,
    ]);
    expect(aStartedBeforeB).toBeLessThanOrEqual(4);
    expect(bDone.digests?.sha256.hex).toBe(await fileDigest('sha256', paths[500]));

    await waitForTenantDone('a', 500);
    await sampler.stop();
    expect(
      worker.lines.some(
        (line) => line.jobId === held[0].id && /nothing to do/.test(line.msg ?? ''),
      ),
    ).toBe(true);
    process.stdout.write(
      `fairness: A jobs started before B's job started: ${aStartedBeforeB} of 500; ` +
        `A running at once: max ${sampler.max} over ${sampler.samples} samples, ` +
        `max ${await maxOverlap(env.db, 'a')} from the recorded history\n`,
    );
    expect(sampler.max).toBeLessThanOrEqual(2);
    expect(sampler.max).toBeGreaterThanOrEqual(1);
    expect(await maxOverlap(env.db, 'a')).toBeLessThanOrEqual(2);
    await expectDigests('a');
    await expectDigests('b');
    await worker.stop();
  }, 300_000);

  it('a SIGKILLed worker leaks no slot: a new worker finishes every job within the limit', async () => {
    const settings = {
      WORKER_CONCURRENCY: '4',
      CHECKPOINT_BYTES: String(MiB),
      CHUNK_BYTES: String(256 * 1024),
      RECONCILE_SECONDS: '2',
    };
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const path = await env.createFile(`c-${i}.bin`, 3);
      ids.push(await submit('c', path));
    }
    // The worker's first checkpoint waits on the lock: C's 2 admitted jobs stay running.
    const states = await env.lockTable('job_states');
    const doomed = env.startWorker(settings);
    const sampler = new RunningSampler(env.db, 'c');
    for (;;) {
      const running = await count(`tenant_id = 'c' AND status = 'running'`, []);
      if (running === 2 && (await states.waiters()) >= 2) break;
      if (!doomed.running) throw new Error(`worker exited:\n${doomed.tail()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    doomed.kill('SIGKILL');
    await doomed.exited;
    await states.release();

    env.startWorker(settings);
    await waitForTenantDone('c', ids.length);
    await sampler.stop();
    expect(sampler.max).toBe(2);
    expect(await maxOverlap(env.db, 'c')).toBe(2);
    expect(await count(`tenant_id = 'c' AND admission <> 'admitted'`, [])).toBe(0);
    await expectDigests('c');
  }, 300_000);
});
