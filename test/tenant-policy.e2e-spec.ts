/**
 * Per-tenant settings at submission (issue 15, docs/tenants.md): file_roots, allowed_hosts,
 * allowed_buckets and max_queued_jobs. Every refusal has its code and creates nothing. Until the
 * authentication guard lands, the API's caller is the default tenant: its settings are set in the
 * database, which is the very code path a keyed tenant takes; another tenant is driven through
 * JobsService, as the guard will.
 */
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { TenantsRepository } from '@hashq/jobs';
import request from 'supertest';

import { ApiError } from '../apps/api/src/common/api-error';
import { JobsService } from '../apps/api/src/jobs/jobs.service';
import { type ApiTestbed, createApiTestbed } from './helpers/api';

describe('tenant policy at submission', () => {
  let bed: ApiTestbed;
  let tenants: TenantsRepository;

  beforeAll(async () => {
    bed = await createApiTestbed();
    tenants = bed.app.get(TenantsRepository);
    const root = bed.env.fileRoot;
    for (const folder of ['a', 'b']) await mkdir(join(root, folder));
    await writeFile(join(root, 'a', 'x.bin'), 'in a');
    await writeFile(join(root, 'b', 'y.bin'), 'in b');
    await symlink(join(root, 'b', 'y.bin'), join(root, 'a', 'to-b.bin'));
    await symlink(join(root, 'a'), join(root, 'link-to-a'));
  });

  afterAll(() => bed?.close());

  beforeEach(async () => {
    await bed.db.query(
      `UPDATE tenants SET file_roots = NULL, allowed_hosts = NULL, allowed_buckets = NULL,
              max_running_jobs = NULL, max_queued_jobs = NULL WHERE id = 'default'`,
    );
    await bed.db.query(`UPDATE jobs SET status = 'canceled' WHERE status = 'queued'`);
  });

  /** Sets the default tenant's settings and drops the API's cached copy. */
  async function settings(assignments: string, params: unknown[] = []): Promise<void> {
    await bed.db.query(`UPDATE tenants SET ${assignments} WHERE id = 'default'`, params);
    tenants.forget();
  }

  const submit = (source: unknown, idempotencyKey?: string) => {
    const post = request(bed.app.getHttpServer()).post('/v1/jobs');
    if (idempotencyKey) post.set('Idempotency-Key', idempotencyKey);
    return post.send({ source, algorithms: ['sha256'] });
  };

  const jobCount = async (): Promise<number> =>
    (await bed.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs`)).rows[0].n;

  /** The submission is refused with `status` and `code`, and no job row appears. */
  async function refused(source: unknown, status: number, code: string): Promise<void> {
    const before = await jobCount();
    const answer = await submit(source);
    expect([answer.status, answer.body.error?.code]).toEqual([status, code]);
    expect(await jobCount()).toBe(before);
  }

  it('file sources only beneath the tenant file_roots (real paths), within HASHQ_FILE_ROOTS', async () => {
    const root = bed.env.fileRoot;
    await settings(`file_roots = $1`, [[join(root, 'a'), '/etc']]);
    await submit({ type: 'file', path: join(root, 'a', 'x.bin') }).expect(202);
    await submit(`file://${join(root, 'link-to-a', 'x.bin')}`).expect(202);
    await refused({ type: 'file', path: join(root, 'b', 'y.bin') }, 403, 'PATH_OUTSIDE_ROOTS');
    // A symlink inside the tenant's root leading to another folder of the deployment's root.
    await refused({ type: 'file', path: join(root, 'a', 'to-b.bin') }, 403, 'PATH_OUTSIDE_ROOTS');
    // A tenant root outside HASHQ_FILE_ROOTS grants nothing.
    await refused({ type: 'file', path: '/etc/hostname' }, 403, 'PATH_OUTSIDE_ROOTS');

    // A tenant root given through a symlink: compared by its real path.
    await settings(`file_roots = $1`, [[join(root, 'link-to-a')]]);
    await submit({ type: 'file', path: join(root, 'a', 'x.bin') }).expect(202);
    await refused({ type: 'file', path: join(root, 'b', 'y.bin') }, 403, 'PATH_OUTSIDE_ROOTS');

    await settings(`file_roots = '{}'`);
    await refused({ type: 'file', path: join(root, 'a', 'x.bin') }, 403, 'PATH_OUTSIDE_ROOTS');
    await settings(`file_roots = NULL`);
    await submit({ type: 'file', path: join(root, 'b', 'y.bin') }).expect(202);
  });

  it('http sources only to allowed_hosts: exact names and *.suffix', async () => {
    await settings(`allowed_hosts = $1`, [['files.example.com', '*.cdn.example.net']]);
    for (const url of [
      'https://files.example.com/a',
      'https://FILES.example.com./b',
      'http://files.example.com:8080/c',
      'https://eu.cdn.example.net/d',
      'https://x.eu.cdn.example.net/e',
    ]) {
      const answer = await submit(url);
      expect([url, answer.status]).toEqual([url, 202]);
    }
    for (const url of [
      'https://cdn.example.net/a', // the suffix itself is not below it
      'https://evil.example.com/b',
      'https://files.example.com.evil.org/c',
      'https://example.com/d',
      'https://xcdn.example.net/e',
    ]) {
      await refused(url, 403, 'SOURCE_NOT_ALLOWED');
    }
    await refused({ type: 'http', url: 'https://evil.example.com/' }, 403, 'SOURCE_NOT_ALLOWED');

    await settings(`allowed_hosts = '{}'`);
    await refused('https://files.example.com/a', 403, 'SOURCE_NOT_ALLOWED');
  });

  it('s3 sources only in allowed_buckets', async () => {
    await settings(`allowed_buckets = $1`, [['tenant-a']]);
    await submit('s3://tenant-a/some/key').expect(202);
    await submit({ type: 's3', bucket: 'tenant-a', key: 'k' }).expect(202);
    await refused('s3://tenant-b/some/key', 403, 'SOURCE_NOT_ALLOWED');
    await refused({ type: 's3', bucket: 'tenant-a2', key: 'k' }, 403, 'SOURCE_NOT_ALLOWED');
    // The host list does not open buckets, nor the bucket list hosts.
    await settings(`allowed_hosts = '{}'`);
    await submit('s3://tenant-a/other').expect(202);
    await refused('https://tenant-a/x', 403, 'SOURCE_NOT_ALLOWED');
  });

  it('max_queued_jobs: 429 TENANT_QUEUE_FULL beyond it, replays still answered', async () => {
    const file = { type: 'file', path: join(bed.env.fileRoot, 'a', 'x.bin') };
    await settings(`max_queued_jobs = 3`);
    const first = await submit(file, 'key-1').expect(202);
    await submit(file).expect(202);
    await submit(file).expect(202);
    await refused(file, 429, 'TENANT_QUEUE_FULL');
    // An idempotent retry of an accepted job is not a new job: answered, not refused.
    const replay = await submit(file, 'key-1').expect(202);
    expect(replay.body.id).toBe(first.body.id);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    // A canceled job leaves the queue: one place again.
    await request(bed.app.getHttpServer()).post(`/v1/jobs/${first.body.id}/cancel`).expect(200);
    await submit(file).expect(202);
    await refused(file, 429, 'TENANT_QUEUE_FULL');
  });

  it('max_queued_jobs holds under concurrent submissions: exactly the free places are taken', async () => {
    const file = { type: 'file', path: join(bed.env.fileRoot, 'a', 'x.bin') };
    await settings(`max_queued_jobs = 7`);
    await submit(file).expect(202);
    await submit(file).expect(202);
    const answers = await Promise.all(Array.from({ length: 20 }, () => submit(file)));
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses.filter((status) => status === 202)).toHaveLength(5);
    expect(statuses.filter((status) => status === 429)).toHaveLength(15);
    const queued = await bed.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM jobs WHERE status = 'queued' AND tenant_id = 'default'`,
    );
    expect(queued.rows[0].n).toBe(7);
  });

  it("another tenant's settings and limits are its own", async () => {
    await tenants.create({
      id: 'tenant-b',
      name: 'B',
      maxQueuedJobs: 1,
      allowedHosts: ['b.example.org'],
    });
    const service = bed.app.get(JobsService);
    const job = await service.submit(
      { source: 'https://b.example.org/1', algorithms: ['sha256'] },
      undefined,
      'tenant-b',
    );
    const row = await bed.db.query(`SELECT tenant_id FROM jobs WHERE id = $1`, [job.job.id]);
    expect(row.rows[0].tenant_id).toBe('tenant-b');
    const full = await service
      .submit({ source: 'https://b.example.org/2', algorithms: ['sha256'] }, undefined, 'tenant-b')
      .catch((err: unknown) => err);
    expect(full).toBeInstanceOf(ApiError);
    expect((full as ApiError).getStatus()).toBe(429);
    const host = await service
      .submit(
        { source: 'https://files.example.com/', algorithms: ['sha256'] },
        undefined,
        'tenant-b',
      )
      .catch((err: unknown) => err);
    expect((host as ApiError).getStatus()).toBe(403);
    // The default tenant is not held by B's limits, nor B by the default's settings.
    await submit('https://files.example.com/1').expect(202);
    await submit('https://b.example.org/3').expect(202);
  });
});
