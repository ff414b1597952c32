/**
 * `priority` is BullMQ's own range (1 … PRIORITY_LIMIT = 2^21 - 1), and a job BullMQ refuses
 * cannot wedge the queue reconciler: a row an older version stored with priority 2^21 (the old
 * documented maximum) ends 'failed' with ENQUEUE_REFUSED, and every other job Redis lost is put
 * back in the same round.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { HASH_QUEUE, JobQueueReconciler } from '@hashq/jobs';
import type { INestApplication } from '@nestjs/common';
import { PRIORITY_LIMIT, Queue } from 'bullmq';
import { Client } from 'pg';
import request from 'supertest';

import { createApiApp } from './helpers/api';
import { createTestEnv, type TestEnv } from './helpers/env';

describe('job priority and the queue reconciler (e2e)', () => {
  let env: TestEnv;
  let app: INestApplication;
  let queue: Queue;
  let db: Client;
  let file: string;

  beforeAll(async () => {
    env = await createTestEnv({ RECONCILE_SECONDS: '3600' });
    queue = new Queue(HASH_QUEUE, { connection: { url: env.redisUrl }, prefix: env.queuePrefix });
    db = new Client({ connectionString: env.databaseUrl });
    await db.connect();
    file = join(env.fileRoot, 'a.bin');
    await writeFile(file, 'abc');
  });

  afterAll(async () => {
    await queue?.close();
    await db?.end();
    await app?.close();
    await env?.cleanup();
  });

  /** A queued row as an earlier version of the API wrote it (no BullMQ job: Redis lost it). */
  async function insertQueued(options: object, age: string): Promise<string> {
    const { rows } = await db.query<{ id: string }>(
      `INSERT INTO jobs (status, source, algorithms, options, total_bytes, created_at, updated_at)
       VALUES ('queued', $1, '{sha256}', $2, 3, now() - $3::interval, now() - $3::interval) RETURNING id`,
      [JSON.stringify({ type: 'file', path: file }), JSON.stringify(options), age],
    );
    return rows[0].id;
  }

  it('a poison row fails with ENQUEUE_REFUSED and does not keep the jobs after it out of the queue', async () => {
    const poison = await insertQueued({ priority: PRIORITY_LIMIT + 1 }, '10 minutes');
    const lost = [
      await insertQueued({}, '5 minutes'),
      await insertQueued({ priority: 7 }, '4 minutes'),
    ];
    const poisonLater = await insertQueued({ priority: PRIORITY_LIMIT + 1 }, '3 minutes');
    const last = await insertQueued({ priority: PRIORITY_LIMIT }, '2 minutes');

    app = await createApiApp(env);
    await app.get(JobQueueReconciler).reconcile();

    for (const id of [...lost, last]) {
      const job = await queue.getJob(id);
      expect([id, await job?.getState()]).toEqual([
        id,
        expect.stringMatching(/^(waiting|prioritized)$/),
      ]);
    }
    expect((await queue.getJob(last))?.opts.priority).toBe(PRIORITY_LIMIT);
    for (const id of [poison, poisonLater]) {
      expect(await queue.getJob(id)).toBeUndefined();
      const res = await request(app.getHttpServer()).get(`/v1/jobs/${id}`).expect(200);
      expect(res.body.status).toBe('failed');
      expect(res.body.error).toMatchObject({
        code: 'ENQUEUE_REFUSED',
        message: expect.stringContaining('BullMQ refused'),
      });
      expect(res.body.finishedAt).not.toBeNull();
    }
    // A later round has nothing left to do with them.
    expect(await app.get(JobQueueReconciler).reconcile()).toBe(0);
  });

  it("accepts BullMQ's highest priority and enqueues it; one more is a 400", async () => {
    const ok = await request(app.getHttpServer())
      .post('/v1/jobs')
      .send({
        source: { type: 'file', path: file },
        algorithms: ['sha256'],
        priority: PRIORITY_LIMIT,
      })
      .expect(202);
    expect((await queue.getJob(ok.body.id))?.opts.priority).toBe(PRIORITY_LIMIT);

    const refused = await request(app.getHttpServer())
      .post('/v1/jobs')
      .send({
        source: { type: 'file', path: file },
        algorithms: ['sha256'],
        priority: PRIORITY_LIMIT + 1,
      });
    expect([refused.status, refused.body.error?.code]).toEqual([400, 'VALIDATION_FAILED']);
    expect(refused.body.error.details).toEqual([
      { field: 'priority', problems: [`priority must not be greater than ${PRIORITY_LIMIT}`] },
    ]);
  });
});
