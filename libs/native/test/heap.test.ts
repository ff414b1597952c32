/**
 * retainFreedHeap, read back through the kernel's count of minor page faults: a node:http server
 * that hashes 8 MiB bodies (2,048 pages each) faults its freed read buffers in again with glibc's
 * default trimming, and hardly at all once its heap keeps them. Each server is a child process
 * of its own (the setting is the process's), both with glibc's trim threshold pinned at its
 * default (GLIBC_TUNABLES), which glibc otherwise raises at times after freeing a large block.
 * glibc is the C library of every platform hashq builds for (Debian, its Docker images).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import * as http from 'node:http';
import * as path from 'node:path';
import type { Readable, Writable } from 'node:stream';

import { retainFreedHeap } from '../lib';

const BYTES = 8 << 20;
const PAGES = BYTES / 4096;
const REQUESTS = 16;

/** Minor page faults per request of a server child, once warm, and the digests it computed. */
async function serve(retain: boolean, body: Buffer) {
  const helpers = path.join(__dirname, 'helpers');
  const child = spawn(
    process.execPath,
    ['-r', path.join(helpers, 'register.js'), path.join(helpers, 'child.ts'), 'heap-server'],
    {
      env: { ...process.env, GLIBC_TUNABLES: 'glibc.malloc.trim_threshold=131072' },
      stdio: ['pipe', 'pipe', 'inherit', 'ipc'],
    },
  );
  const out: Buffer[] = [];
  (child.stdout as Readable).on('data', (piece: Buffer) => out.push(piece));
  const exited = once(child, 'exit');
  (child.stdin as Writable).end(JSON.stringify({ retain }));
  const next = async <T>(): Promise<T> => ((await once(child, 'message')) as [T])[0];
  const agent = new http.Agent({ keepAlive: true });
  try {
    const { port } = await next<{ port: number }>();
    const send = () =>
      new Promise<void>((resolve, reject) => {
        http
          .request({ host: '127.0.0.1', port, method: 'PUT', agent }, (res) =>
            res.resume().on('end', resolve),
          )
          .on('error', reject)
          .end(body);
      });
    const faults = async () => {
      child.send('faults');
      return (await next<{ faults: number }>()).faults;
    };
    for (let i = 0; i < 4; i++) await send();
    const before = await faults();
    for (let i = 0; i < REQUESTS; i++) await send();
    const faultsPerRequest = ((await faults()) - before) / REQUESTS;
    child.send('stop');
    const [code] = await exited;
    expect(code).toBe(0);
    const { retained, digests } = JSON.parse(Buffer.concat(out).toString()) as {
      retained: boolean;
      digests: string[];
    };
    return { retained, digests, faultsPerRequest };
  } finally {
    agent.destroy();
    child.kill();
  }
}

describe('retainFreedHeap', () => {
  it('keeps a server from faulting in its read buffers again (glibc)', async () => {
    const body = Buffer.alloc(BYTES, 0x5a);
    const want = createHash('sha256').update(body).digest('hex');
    const plain = await serve(false, body);
    const kept = await serve(true, body);
    expect([plain.retained, kept.retained]).toEqual([false, true]);
    for (const run of [plain, kept]) expect(run.digests).toEqual(Array(REQUESTS + 4).fill(want));
    // under 5 % of a body's pages, where the same server without it faults in many times that
    expect(kept.faultsPerRequest).toBeLessThan(PAGES / 20);
    expect(plain.faultsPerRequest).toBeGreaterThan(4 * kept.faultsPerRequest);
  }, 60_000);

  it.each([-1, 1.5, NaN, 2 ** 31, '1' as unknown as number])(
    'refuses %p bytes with ERR_BAD_ARGUMENT',
    (bytes) => {
      expect(() => retainFreedHeap(bytes)).toThrow(
        expect.objectContaining({ code: 'ERR_BAD_ARGUMENT' }),
      );
    },
  );
});
