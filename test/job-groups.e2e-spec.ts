/**
 * Job groups: small file jobs submitted at the same time go to BullMQ together (one
 * HASH_GROUP_JOB per priority) and a real worker process hashes them natively and ends them with
 * one statement. Every job still behaves as a job of its own: digests equal Node's crypto, the
 * `expected` option is compared, a missing file fails with the single-job path's code, a job
 * canceled while it waits is never run, a cancel or lease that gets in before the group's write
 * wins, a worker killed mid-group leaves nothing done twice, and when Redis loses a group the queue
 * reconciler puts its jobs back one by one (never while the group is alive).
 */
import { createHash, randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { HASH_GROUP_JOB, type HashGroupJobData, JobQueueReconciler } from '@hashq/jobs';
import type { INestApplication } from '@nestjs/common';
import type { Job } from 'bullmq';
import request from 'supertest';

import { createApiApp } from './helpers/api';
import { MiB, WorkerTestEnv } from './helpers/worker-process';

interface JobBody {
  id: string;
  status: string;
  digests: Record<string, { hex: string; base64: string }> | null;
  error: { code: string; message: string } | null;
  progress: { bytesDone: number; totalBytes: number | null };
}

const SIZES = [0, 1, 4096, 100_000, MiB + 7];

describe('job groups: small file jobs dispatched and hashed together', () => {
  const env = new WorkerTestEnv();
  let app: INestApplication;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    await env.setUp();
    app = await createApiApp(env.env);
  });

  afterAll(async () => {
    await app?.close();
    await env.tearDown();
  });

  async function writeFiles(
    prefix: string,
    count: number,
  ): Promise<{ path: string; data: Buffer }[]> {
    const files = [];
    for (let i = 0; i < count; i++) {
      const data = randomBytes(SIZES[i % SIZES.length]);
      const path = join(env.dataDir, `${prefix}-${i}.bin`);
      await writeFile(path, data);
      files.push({ path, data });
    }
    return files;
  }

  /** The requests all at once, as concurrent clients send them. */
  async function submitTogether(bodies: Record<string, unknown>[]): Promise<JobBody[]> {
    const answers = await Promise.all(bodies.map((body) => http().post('/v1/jobs').send(body)));
    for (const res of answers) expect(`${res.status} ${JSON.stringify(res.body)}`).toMatch(/^202 /);
    return answers.map((res) => res.body as JobBody);
  }

  /**
   * `count` files, each submitted as a sha256 job, all at once; again (a new set each time, at
   * most 5 times) until one group has `minGroup` jobs or more: how the API's answers fall into
   * event-loop turns decides the groups' sizes, and a busy machine can split 12 jobs finely.
   * Returns the groups waiting after the last round (nothing takes them before a worker starts).
   */
  async function submitSha256Files(prefix: string, count: number, minGroup: number) {
    const files: { path: string; data: Buffer }[] = [];
    const jobs: JobBody[] = [];
    let groups: string[][] = [];
    for (let round = 0; round < 5; round++) {
      const more = await writeFiles(`${prefix}-${round}`, count);
      files.push(...more);
      jobs.push(
        ...(await submitTogether(
          more.map(({ path }) => ({ source: { type: 'file', path }, algorithms: ['sha256'] })),
        )),
      );
      ({ groups } = await dispatched());
      if (groups.some((ids) => ids.length >= minGroup)) break;
    }
    return { files, jobs, groups };
  }

  /** The job succeeded with Node's sha256 of `data`. */
  function expectSha256(job: JobBody, data: Buffer): void {
    expect(job.status).toBe('succeeded');
    expect(job.digests?.sha256.hex).toBe(createHash('sha256').update(data).digest('hex'));
  }

  /** BullMQ's waiting jobs: the groups, and the jobs that went alone. */
  async function dispatched(): Promise<{ groups: string[][]; alone: string[] }> {
    const waiting: Job[] = await env.queue.getJobs(['wait', 'prioritized']);
    return {
      groups: waiting
        .filter((job) => job.name === HASH_GROUP_JOB)
        .map((job) => (job.data as HashGroupJobData).jobIds),
      alone: waiting.filter((job) => job.name !== HASH_GROUP_JOB).map((job) => job.data.jobId),
    };
  }

  async function finished(id: string, timeoutMs = 60_000): Promise<JobBody> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { body } = await http().get(`/v1/jobs/${id}`).expect(200);
      if (['succeeded', 'failed', 'canceled'].includes(body.status)) return body as JobBody;
      if (Date.now() > deadline) throw new Error(`job ${id} still ${body.status}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it('hashes each job of a group as a job of its own, with Node crypto as the oracle', async () => {
    const files = await writeFiles('g', 30);
    const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
    const bodies: Record<string, unknown>[] = files.map(({ path }, i) => ({
      source: { type: 'file', path },
      algorithms: i % 3 === 0 ? ['sha512', 'sha3-256'] : ['sha256'],
    }));
    bodies[1].expected = { sha256: sha256(files[1].data) };
    bodies[2].expected = { sha256: sha256(Buffer.from('something else')) };
    bodies[4] = { ...bodies[4], algorithms: ['shake256'], outputLength: 64 };
    const jobs = await submitTogether(bodies);
    const ids = jobs.map((job) => job.id);

    // No worker yet: what went to BullMQ. Every job once, most of them in groups.
    const { groups, alone } = await dispatched();
    expect(groups.length).toBeGreaterThan(0);
    expect([...groups.flat(), ...alone].sort()).toEqual([...ids].sort());
    expect(groups.every((group) => group.length > 1)).toBe(true);
    // The API's reconciler sees the grouped jobs as dispatched: it adds none of them again.
    expect(await app.get(JobQueueReconciler).reconcile()).toBe(0);

    // Before the worker runs: one file goes, one job is canceled.
    const grouped = new Set(groups.flat());
    const [missing, canceled] = ids.slice(5).filter((id) => grouped.has(id));
    await rm(files[ids.indexOf(missing)].path);
    await http().post(`/v1/jobs/${canceled}/cancel`).expect(200);

    const worker = env.startWorker();
    try {
      for (const [i, id] of ids.entries()) {
        const job = await finished(id);
        const { data } = files[i];
        if (id === missing) {
          expect(job.status).toBe('failed');
          expect(job.error?.code).toBe('SOURCE_NOT_FOUND');
          continue;
        }
        if (id === canceled) {
          expect(job.status).toBe('canceled');
          expect((await env.job(id)).fence).toBe(0); // never leased
          continue;
        }
        if (i === 2) {
          expect(job.status).toBe('failed');
          expect(job.error?.code).toBe('DIGEST_MISMATCH');
        } else {
          expect(job.status).toBe('succeeded');
        }
        expect(job.progress).toMatchObject({ bytesDone: data.length, totalBytes: data.length });
        const algorithms = bodies[i].algorithms as string[];
        expect(Object.keys(job.digests ?? {}).sort()).toEqual([...algorithms].sort());
        for (const algorithm of algorithms) {
          const digest = createHash(
            algorithm,
            algorithm === 'shake256' ? { outputLength: 64 } : undefined,
          )
            .update(data)
            .digest();
          expect(job.digests?.[algorithm]).toEqual({
            hex: digest.toString('hex'),
            base64: digest.toString('base64'),
          });
        }
      }
      // Hashed in the group, not handed to the single-job path: their 'finished' lines say so.
      const inGroup = worker.lines
        .filter((line) => line.msg === 'finished' && line.grouped === true)
        .map((line) => line.jobId);
      expect(inGroup.sort()).toEqual(
        [...grouped].filter((id) => id !== missing && id !== canceled).sort(),
      );
    } finally {
      await worker.stop();
    }
  });

  it('lets a cancel or a lease that comes between its read and its write win', async () => {
    const { files, jobs, groups } = await submitSha256Files('race', 12, 3);
    const group = groups.find((ids) => ids.length >= 3);
    expect(group).toBeDefined();
    const [canceled, leased] = group!;
    // Writes to jobs wait; reads go on: the worker reads the group, hashes it, and its one
    // UPDATE waits here while a cancel and a lease of the single-job path get in first.
    const lock = await env.lockTable('jobs');
    const worker = env.startWorker();
    try {
      await lock.waitForWaiter(worker);
      await lock.query(
        `UPDATE jobs SET status = 'canceled', cancel_requested = true, finished_at = now()
          WHERE id = $1 AND status = 'queued'`,
        [canceled],
      );
      await lock.query(
        `UPDATE jobs SET status = 'running', fence = fence + 1, attempts = attempts + 1,
                lease_owner = 'another worker', lease_expires_at = now() + interval '1 hour'
          WHERE id = $1 AND status = 'queued'`,
        [leased],
      );
      await lock.commit();
      for (const [i, job] of jobs.entries()) {
        if (job.id === leased) continue;
        const done = await finished(job.id);
        if (job.id === canceled) {
          expect(done.status).toBe('canceled');
          expect(done.digests).toBeNull();
          continue;
        }
        expectSha256(done, files[i].data);
      }
      const other = await env.job(leased);
      expect([other.status, other.fence, other.lease_owner, other.digests]).toEqual([
        'running',
        1,
        'another worker',
        null,
      ]);
    } finally {
      await lock.release();
      await worker.stop();
    }
  });

  it('survives a worker killed while its group is being written', async () => {
    const { files, jobs, groups } = await submitSha256Files('killed', 10, 2);
    const grouped = new Set(groups.flat());
    expect(grouped.size).toBeGreaterThan(0);
    const lock = await env.lockTable('jobs');
    const first = env.startWorker();
    try {
      await lock.waitForWaiter(first); // read and hashed; its one write waits
      first.kill('SIGKILL');
      await first.exited;
    } finally {
      await lock.release();
    }
    const second = env.startWorker(); // BullMQ hands it the stalled group
    try {
      for (const [i, job] of jobs.entries()) {
        const done = await finished(job.id);
        expectSha256(done, files[i].data);
        // A grouped job ends once. One that went alone may have been leased by the killed worker
        // (its lease UPDATE was the write that waited): that lease ran out, and it ran again.
        const row = await env.job(job.id);
        if (grouped.has(job.id)) expect([row.attempts, row.fence]).toEqual([1, 1]);
      }
    } finally {
      await second.stop();
    }
  });

  it('puts the jobs of a group Redis lost back one by one, and they succeed', async () => {
    const { files, jobs, groups } = await submitSha256Files('lost', 12, 2);
    expect(groups.length).toBeGreaterThan(0);
    const lost = groups.flat();
    for (const job of await env.queue.getJobs(['wait', 'prioritized']))
      if (job.name === HASH_GROUP_JOB) await job.remove();

    await app.get(JobQueueReconciler).reconcile();
    for (const id of lost) expect((await env.queue.getJob(id))?.data.jobId).toBe(id);

    const worker = env.startWorker();
    try {
      for (const [i, job] of jobs.entries()) {
        const done = await finished(job.id);
        expectSha256(done, files[i].data);
        expect((await env.job(job.id)).attempts).toBe(1);
      }
    } finally {
      await worker.stop();
    }
  });
});
