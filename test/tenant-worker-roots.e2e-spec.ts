/**
 * A tenant's file_roots hold in the worker too, not only at submission: the worker opens a
 * tenant's file sources beneath its roots, so a path that was inside them when the API checked it
 * and was swapped for a symlink to another folder of HASHQ_FILE_ROOTS before the worker opened it
 * (simulated by storing that path directly) is refused with PATH_OUTSIDE_ROOTS. The default
 * tenant (no file_roots) reads the same symlink: the refusal is the tenant's roots, nothing else.
 * Real worker process; digests compared with Node's crypto.
 */
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { fileDigest, WorkerTestEnv } from './helpers/worker-process';

describe("a tenant's file_roots in the worker (e2e)", () => {
  const env = new WorkerTestEnv();
  beforeAll(() => env.setUp());
  afterAll(() => env.tearDown());

  it("refuses a path that leads out of the tenant's roots at open time", async () => {
    const mine = join(env.dataDir, 'tenant-t');
    const other = join(env.dataDir, 'tenant-u');
    await mkdir(mine);
    await mkdir(other);
    await writeFile(join(mine, 'own.bin'), 'tenant t data');
    await writeFile(join(other, 'secret.bin'), "tenant u's data");
    await symlink(join(other, 'secret.bin'), join(mine, 'swapped.bin'));
    await env.db.query(`INSERT INTO tenants (id, name, file_roots) VALUES ('t', 't', $1)`, [
      [mine],
    ]);

    const own = await env.submit(join(mine, 'own.bin'), ['sha256']);
    const swapped = await env.submit(join(mine, 'swapped.bin'), ['sha256']);
    const outside = await env.submit(join(other, 'secret.bin'), ['sha256']);
    const control = await env.submit(join(mine, 'swapped.bin'), ['sha256']);
    await env.db.query(`UPDATE jobs SET tenant_id = 't' WHERE id = ANY($1)`, [
      [own, swapped, outside],
    ]);

    const worker = env.startWorker();
    const done = (row: { status: string }) => ['succeeded', 'failed'].includes(row.status);
    const rows = await Promise.all(
      [own, swapped, outside, control].map((id) => env.waitForJob(id, done, worker)),
    );
    expect(rows.map((row) => [row.status, row.error_code])).toEqual([
      ['succeeded', null],
      ['failed', 'PATH_OUTSIDE_ROOTS'],
      ['failed', 'PATH_OUTSIDE_ROOTS'],
      ['succeeded', null],
    ]);
    expect(rows[0].digests?.sha256.hex).toBe(await fileDigest('sha256', join(mine, 'own.bin')));
    expect(rows[3].digests?.sha256.hex).toBe(await fileDigest('sha256', join(other, 'secret.bin')));
  });
});
