/**
 * A tenant's settings hold for batches as for jobs (issues 14 and 15, docs/tenants.md): tenant
 * 't' (file_roots [a], allowed_buckets [mine]) may not list b, may not name another bucket or a
 * file of b in an inline manifest (403, nothing created); its listing of a skips a symlink into b;
 * a manifest it references from a names a file of b: that item fails PATH_OUTSIDE_ROOTS in the
 * worker. The default tenant (no settings) runs the same batches (control), and its batch is
 * another tenant's 404. API in process, a real worker process; digests checked with Node's crypto.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import type { INestApplication } from '@nestjs/common';

import { createApiApp } from './helpers/api';
import { BatchClient, sha256, writeTree } from './helpers/batches';
import { createTestKey } from './helpers/env';
import { type WorkerProcess, WorkerTestEnv } from './helpers/worker-process';

describe("a tenant's settings applied to batches", () => {
  const env = new WorkerTestEnv();
  let app: INestApplication;
  let worker: WorkerProcess;
  let client: BatchClient;
  let tenantApp: INestApplication;
  let tenant: BatchClient; // the API as tenant t's key calls it
  let tenantAuth: string;
  let a: string;
  let b: string;
  const files = { 'one.bin': randomBytes(3000), 'two.bin': randomBytes(17) };
  const secret = randomBytes(999);

  beforeAll(async () => {
    await env.setUp();
    a = await writeTree(join(env.dataDir, 'a'), files);
    b = join(env.dataDir, 'b');
    await mkdir(b);
    await writeFile(join(b, 'secret.bin'), secret);
    await symlink(join(b, 'secret.bin'), join(a, 'to-b.bin'));
    await symlink(b, join(a, 'link-to-b')); // a folder that is b (the lister skips it)
    await env.db.query(
      `INSERT INTO tenants (id, name, file_roots, allowed_buckets) VALUES ('t', 't', $1, $2)`,
      [[a], ['mine']],
    );
    const { key } = await createTestKey(
      { databaseUrl: env.env.databaseUrl, schema: env.env.schema },
      { tenantId: 't', scopes: ['batches:read', 'batches:write'] },
    );
    tenantAuth = `Bearer ${key}`;
    app = await createApiApp(env.env);
    worker = env.startWorker();
    await worker.waitForLog((line) => line.msg === 'worker started');
    client = new BatchClient(app, () => [worker]);
    tenantApp = await createApiApp({ ...env.env, auth: { Authorization: tenantAuth } });
    tenant = new BatchClient(tenantApp, () => [worker]);
  });

  afterAll(async () => {
    await worker?.stop();
    await app?.close();
    await tenantApp?.close();
    await env.tearDown();
  });

  const asTenant = (source: unknown) =>
    tenant
      .http()
      .post('/v1/batches')
      .send({ source, algorithms: ['sha256'] });

  const batchCount = async (): Promise<number> =>
    (await env.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM batches`)).rows[0].n;

  /** Tenant t's batch of `source` is refused with 403 `code` and creates nothing. */
  async function refused(source: unknown, code: string): Promise<void> {
    const before = await batchCount();
    const res = await asTenant(source);
    expect([res.status, res.body.error?.code]).toEqual([403, code]);
    expect(await batchCount()).toBe(before);
  }

  it('refuses a directory, a bucket and inline manifest lines outside the settings', async () => {
    await refused({ type: 'directory', path: b }, 'PATH_OUTSIDE_ROOTS');
    await refused({ type: 'directory', path: join(a, 'link-to-b') }, 'PATH_OUTSIDE_ROOTS');
    await refused({ type: 's3', bucket: 'theirs' }, 'SOURCE_NOT_ALLOWED');
    await refused(
      { type: 'manifest', content: `${join(a, 'one.bin')}\n${join(b, 'secret.bin')}\n` },
      'PATH_OUTSIDE_ROOTS',
    );
    await refused(
      { type: 'manifest', content: `${join(a, 'to-b.bin')}\n` }, // a link out of the roots
      'PATH_OUTSIDE_ROOTS',
    );
    await refused({ type: 'manifest', content: 's3://theirs/key\n' }, 'SOURCE_NOT_ALLOWED');
    await refused({ type: 'sums', ref: join(a, 'one.bin'), base: b }, 'PATH_OUTSIDE_ROOTS');
  });

  it("lists the tenant's directory beneath its roots: the link out of them is not hashed", async () => {
    const res = await asTenant({ type: 'directory', path: a });
    expect(res.status).toBe(202);
    const batch = await tenant.ended(res.body.id);
    expect(batch.status).toBe('succeeded');
    const items = await tenant.items(res.body.id);
    expect(items.map((item) => [item.name, item.status]).sort()).toEqual([
      ['one.bin', 'succeeded'],
      ['two.bin', 'succeeded'],
    ]);
    for (const item of items)
      expect(item.digests?.sha256.hex).toBe(sha256(files[item.name as keyof typeof files]));
  });

  it('fails the items of a referenced manifest that lie outside the roots', async () => {
    const list = join(a, 'list.txt');
    await writeFile(list, `${join(a, 'one.bin')}\n${join(b, 'secret.bin')}\n`);
    const res = await asTenant({ type: 'manifest', ref: list });
    expect(res.status).toBe(202);
    const batch = await tenant.ended(res.body.id);
    expect(batch.status).toBe('completed_with_failures');
    const items = await tenant.items(res.body.id);
    expect(items.map((item) => [item.name, item.status, item.error?.code ?? null])).toEqual([
      [join(a, 'one.bin'), 'succeeded', null],
      [join(b, 'secret.bin'), 'failed', 'PATH_OUTSIDE_ROOTS'],
    ]);
    expect(items[0].digests?.sha256.hex).toBe(sha256(files['one.bin']));
  });

  it('runs the same batches for the default tenant; its batch is 404 to tenant t', async () => {
    const outside = await client.submit({
      source: { type: 'directory', path: b },
      algorithms: ['sha256'],
    });
    expect((await client.ended(outside.id)).status).toBe('succeeded');
    const [item] = await client.items(outside.id);
    expect(item.digests?.sha256.hex).toBe(sha256(secret));

    const mine = await client.submit({
      source: { type: 'directory', path: a },
      algorithms: ['sha256'],
    });
    expect((await client.ended(mine.id)).status).toBe('succeeded');
    const items = await client.items(mine.id);
    const linked = items.find((entry) => entry.name === 'to-b.bin');
    expect(linked?.digests?.sha256.hex).toBe(sha256(secret));

    // Accepted (no S3 server here: the control is the submission only; canceled at once).
    const s3 = await client.submit({
      source: { type: 's3', bucket: 'theirs' },
      algorithms: ['sha256'],
    });
    await client.http().post(`/v1/batches/${s3.id}/cancel`);

    for (const path of [`/v1/batches/${outside.id}/report`, `/v1/batches/${outside.id}`]) {
      const res = await tenant.http().get(path).query({ format: 'sha256sum' });
      expect([res.status, res.body.error?.code]).toEqual([404, 'BATCH_NOT_FOUND']);
    }
  });
});
