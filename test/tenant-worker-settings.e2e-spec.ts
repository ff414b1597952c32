/**
 * A tenant's settings hold in the worker too. file_roots: not only at submission: the worker opens a
 * tenant's file sources beneath its roots, so a path that was inside them when the API checked it
 * and was swapped for a symlink to another folder of HASHQ_FILE_ROOTS before the worker opened it
 * (simulated by storing that path directly) is refused with PATH_OUTSIDE_ROOTS. The default
 * tenant (no file_roots) reads the same symlink: the refusal is the tenant's roots, nothing else.
 * allowed_hosts: checked at every hop, so an allowed host redirecting elsewhere gets
 * SOURCE_NOT_ALLOWED, while the default tenant follows the same redirect.
 * Real worker process and a real node:http server on loopback; digests compared with Node's crypto.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

import { HASH_QUEUE, hashJobOptions } from '@hashq/jobs';

import { fileDigest, WorkerTestEnv } from './helpers/worker-process';

describe("a tenant's file_roots and allowed_hosts in the worker (e2e)", () => {
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
    await worker.stop(); // the next test's worker has other settings
  });

  it('refuses a redirect from an allowed host to another host (allowed_hosts at every hop)', async () => {
    const body = randomBytes(100_000);
    const server: Server = createServer((req, res) => {
      if (req.url === '/redirect') {
        res.writeHead(302, { location: `http://127.0.0.1:${port}/data` }).end();
      } else {
        res.writeHead(200, { 'content-length': body.length }).end(body);
      }
    });
    await new Promise<void>((done) => server.listen(0, '::', done));
    const port = (server.address() as AddressInfo).port;
    try {
      await env.db.query(`INSERT INTO tenants (id, name, allowed_hosts) VALUES ('h', 'h', $1)`, [
        ['localhost'],
      ]);
      const url = `http://localhost:${port}/redirect`;
      const insert = async (tenant: string) =>
        (
          await env.db.query<{ id: string }>(
            `INSERT INTO jobs (status, source, algorithms, options, tenant_id)
             VALUES ('queued', $1, '{sha256}', '{}', $2) RETURNING id`,
            [JSON.stringify({ type: 'http', url }), tenant],
          )
        ).rows[0].id;
      const refused = await insert('h');
      const followed = await insert('default');
      for (const id of [refused, followed])
        await env.queue.add(HASH_QUEUE, { jobId: id }, hashJobOptions(id));

      const worker = env.startWorker({ HASHQ_ALLOW_HOSTS: '127.0.0.1,::1' });
      const done = (row: { status: string }) => ['succeeded', 'failed'].includes(row.status);
      const rows = await Promise.all(
        [refused, followed].map((id) => env.waitForJob(id, done, worker)),
      );
      expect(rows.map((row) => [row.status, row.error_code])).toEqual([
        ['failed', 'SOURCE_NOT_ALLOWED'],
        ['succeeded', null],
      ]);
      expect(rows[1].digests?.sha256.hex).toBe(createHash('sha256').update(body).digest('hex'));
    } finally {
      server.close();
    }
  });
});
