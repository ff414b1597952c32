import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';

import { Client } from 'pg';

import { answered, type ApiProcess, startApiProcess } from './helpers/api-process';
import { createTestEnv, type TestEnv } from './helpers/env';
import { MiB, redirectingHttpStack, seededStream, sessionMetadata, tusUpload } from './helpers/tus';
import { fileDigest } from './helpers/worker-process';

const RETRIES = [0, 300, 600, 1000, 2000, 3000, 5000, 8000];

/**
 * A TCP proxy in front of an API instance that forwards the client's first `limit` bytes and then
 * holds the rest: the instance is left mid-PATCH, with part of the body received, by construction.
 */
async function holdingProxy(
  targetPort: number,
  limit: number,
): Promise<{ url: string; close(): Promise<void> }> {
  let forwarded = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    upstream.pipe(client);
    client.on('data', (chunk: Buffer) => {
      const piece = chunk.subarray(0, Math.max(0, limit - forwarded));
      forwarded += piece.length;
      if (piece.length < chunk.length) client.pause(); // held: never resumed
      if (piece.length > 0 && !upstream.write(piece)) {
        client.pause();
        upstream.once('drain', () => forwarded < limit && client.resume());
      }
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

describe('digest sessions on API processes: killed mid-PATCH, several instances (e2e)', () => {
  let env: TestEnv;
  let db: Client;
  const apis: ApiProcess[] = [];

  beforeAll(async () => {
    env = await createTestEnv();
    db = new Client({ connectionString: env.databaseUrl });
    await db.connect();
  });

  afterAll(async () => {
    await Promise.all(apis.map((api) => api.process.stop('SIGKILL')));
    await db?.end();
    await env?.cleanup();
  });

  const start = async (extra: Record<string, string> = {}): Promise<ApiProcess> => {
    const api = await startApiProcess({ ...env.env, ...extra });
    apis.push(api);
    return api;
  };

  /** Writes `size` bytes of a seeded stream to a file of the test's root. */
  const writeFile = async (name: string, size: number): Promise<string> => {
    const path = join(env.fileRoot, name);
    const handle = await open(path, 'w');
    try {
      for await (const piece of seededStream(size, name, []).stream)
        await handle.write(piece as Buffer);
    } finally {
      await handle.close();
    }
    return path;
  };

  /** GET of a session as JSON, from the instance at `origin`. */
  const getSession = async (origin: string, url: string) =>
    (await (await fetch(`${origin}${new URL(url).pathname}`, { headers: env.auth })).json()) as {
      status: string;
      offset: number;
      digests: Record<string, { hex: string }>;
    };

  const sessionRow = async () =>
    (
      await db.query<{ id: string; upload_offset: string }>(
        'SELECT id, upload_offset FROM digest_sessions ORDER BY created_at DESC LIMIT 1',
      )
    ).rows[0];

  it('SIGKILL mid-PATCH: tus-js-client resumes on another instance from the last checkpoint', async () => {
    const size = 96 * MiB;
    const chunk = 32 * MiB;
    const file = await writeFile('kill.bin', size);
    // Checkpoints every MiB within a PATCH; the proxy holds the client after 40 MiB: the first
    // PATCH (32 MiB) is complete and the second one is cut 8 MiB in, its checkpoints committed.
    const first = await start({ CHECKPOINT_BYTES: String(MiB) });
    const proxy = await holdingProxy(Number(new URL(first.url).port), 40 * MiB);
    let origin = proxy.url;
    const upload = tusUpload(createReadStream(file), {
      endpoint: `${proxy.url}/v1/digest-sessions`,
      chunkSize: chunk,
      headers: env.auth,
      metadata: sessionMetadata(['sha256', 'sha1', 'crc64nvme']),
      retryDelays: RETRIES,
      httpStack: redirectingHttpStack(() => origin),
    });

    let held = 0;
    for (
      const deadline = Date.now() + 60_000;
      held <= chunk + 4 * MiB;
      await new Promise((r) => setTimeout(r, 50))
    ) {
      if (Date.now() > deadline)
        throw new Error(`no checkpoint past ${chunk + 4 * MiB} within 60 s: ${held}`);
      held = Number((await sessionRow())?.upload_offset ?? 0);
    }
    first.process.kill('SIGKILL');
    await first.process.exited;
    const killedAt = Number((await sessionRow()).upload_offset);
    expect(killedAt).toBeGreaterThan(chunk); // a checkpoint within the second PATCH survived the kill
    expect(killedAt).toBeLessThan(40 * MiB);

    const second = await start();
    origin = second.url;
    await proxy.close();
    const { url } = await upload;
    const session = await getSession(second.url, url);
    expect(session).toMatchObject({ status: 'succeeded', offset: size });
    expect(session.digests.sha256.hex).toBe(await fileDigest('sha256', file));
    expect(session.digests.sha1.hex).toBe(await fileDigest('sha1', file));
    expect([answered(second, 'HEAD', 200), answered(second, 'PATCH', 204)]).toEqual([1, 2]); // resumed, not restarted
    expect(answered(first, 'PATCH', 204)).toBe(1);
  }, 180_000);

  it('two instances behind alternating requests complete one upload', async () => {
    const [a, b] = [await start(), await start()];
    const size = 24 * MiB + 7;
    const file = await writeFile('alternating.bin', size);
    let requests = 0;
    const { url } = await tusUpload(createReadStream(file), {
      endpoint: `${a.url}/v1/digest-sessions`,
      chunkSize: 2 * MiB,
      headers: env.auth,
      metadata: sessionMetadata(['sha256', 'sha512', 'md5']),
      httpStack: redirectingHttpStack(() => (requests++ % 2 === 0 ? a.url : b.url)),
    });
    const session = await getSession(b.url, url);
    expect(session).toMatchObject({ status: 'succeeded', offset: size });
    for (const name of ['sha256', 'sha512', 'md5'])
      expect([name, session.digests[name].hex]).toEqual([name, await fileDigest(name, file)]);
    // POST on a, then 13 PATCHes alternating b, a, b, …
    expect([
      answered(a, 'POST', 201),
      answered(a, 'PATCH', 204),
      answered(b, 'PATCH', 204),
    ]).toEqual([1, 6, 7]);
  }, 120_000);
});
