import { createHash, getHashes, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';

import { algorithms, createHasher, hash } from '@hashq/native';
import type { INestApplication } from '@nestjs/common';
import { Client } from 'pg';
import request from 'supertest';

import { DigestSessionCleanup } from '../apps/api/src/digest-sessions/digest-session-cleanup.service';
import { createApiApp } from './helpers/api';
import { createTestEnv, type TestEnv } from './helpers/env';
import { MiB, nodeDigest, seededStream, sessionMetadata, TUS, tusUpload } from './helpers/tus';

/** Our algorithms that Node's crypto also has: fixed-length ones, and the XOFs (at our default length). */
const NODE_ALGORITHMS = algorithms()
  .map((info) => info.name)
  .filter((name) => getHashes().includes(name));
const NODE_FIXED = NODE_ALGORITHMS.filter((name) => !name.startsWith('shake'));
const NODE_XOF = NODE_ALGORITHMS.filter((name) => name.startsWith('shake'));
const b64 = (text: string) => Buffer.from(text).toString('base64');

describe('digest sessions over tus 1.0.0 (e2e, real PostgreSQL, tus-js-client)', () => {
  let env: TestEnv;
  let app: INestApplication;
  let db: Client;
  let endpoint: string;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    env = await createTestEnv({ DIGEST_SESSION_MAX_BYTES: String(4 * 1024 * MiB) });
    app = await createApiApp(env);
    await app.listen(0, '127.0.0.1');
    endpoint = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}/v1/digest-sessions`;
    db = new Client({ connectionString: env.databaseUrl });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await app?.close();
    await env?.cleanup();
  });

  /** POST a session with the given algorithms (and other metadata); its path. */
  const create = async (
    algorithmNames: string[],
    length: number | 'defer',
    extra: Record<string, string> = {},
  ): Promise<string> => {
    const metadata = Object.entries({ algorithms: algorithmNames.join(','), ...extra })
      .map(([key, value]) => `${key} ${b64(value)}`)
      .join(',');
    const res = await http()
      .post('/v1/digest-sessions')
      .set(TUS)
      .set(
        length === 'defer' ? { 'Upload-Defer-Length': '1' } : { 'Upload-Length': String(length) },
      )
      .set('Upload-Metadata', metadata)
      .expect(201);
    expect(res.headers.location).toMatch(/^\/v1\/digest-sessions\/[0-9a-f-]{36}$/);
    return res.headers.location;
  };

  const patch = (
    path: string,
    offset: number | string,
    body: Buffer,
    headers: Record<string, string> = {},
    to: INestApplication = app,
  ) =>
    request(to.getHttpServer())
      .patch(path)
      .set(TUS)
      .set({
        'Content-Type': 'application/offset+octet-stream',
        'Upload-Offset': String(offset),
        ...headers,
      })
      .send(body);

  const row = async (path: string) =>
    (
      await db.query(
        'SELECT status, upload_offset, upload_length, states FROM digest_sessions WHERE id = $1',
        [path.split('/').pop()],
      )
    ).rows[0];

  const expectError = (res: request.Response, status: number, code: string) => {
    expect([res.status, res.headers['tus-resumable']]).toEqual([status, '1.0.0']);
    if (res.request.method !== 'HEAD')
      expect(res.body.error).toMatchObject({ code, message: expect.any(String) });
  };

  it('answers OPTIONS with the version, extensions, checksum algorithms and maximum size', async () => {
    const res = await http().options('/v1/digest-sessions').expect(204);
    expect(res.headers['tus-resumable']).toBe('1.0.0');
    expect(res.headers['tus-version']).toBe('1.0.0');
    expect(res.headers['tus-extension'].split(',').sort()).toEqual([
      'checksum',
      'creation',
      'creation-defer-length',
      'expiration',
      'termination',
    ]);
    expect(res.headers['tus-checksum-algorithm'].split(',')).toEqual(
      expect.arrayContaining(['sha1', 'sha256', 'md5', 'crc32']),
    );
    expect(res.headers['tus-max-size']).toBe(String(4 * 1024 * MiB));
  });

  describe.each([
    ['0 B', 0],
    ['1 B', 1],
    ['5 MiB', 5 * MiB],
  ])('tus-js-client uploads a file of %s', (_name, size) => {
    let path: string;
    let data: Buffer;
    beforeAll(async () => {
      data = randomBytes(size);
      path = join(env.fileRoot, `upload-${size}.bin`);
      await writeFile(path, data);
    });

    it.each([
      ['the fixed-length algorithms Node has', NODE_FIXED],
      ['the XOFs Node has, and crc64nvme', [...NODE_XOF, 'crc64nvme']],
    ])(
      "in 1 MiB PATCHes; the digests of %s equal Node's crypto (crc64nvme: our one-shot)",
      async (_what, names) => {
        const { url, lastResponse } = await tusUpload(createReadStream(path), {
          endpoint,
          chunkSize: MiB,
          metadata: sessionMetadata(names, { filename: 'upload.bin' }),
        });
        const session = (await request(url).get('')).body;
        expect(session).toMatchObject({
          status: 'succeeded',
          offset: size,
          length: size,
          error: null,
        });
        for (const name of names) {
          const expected =
            name === 'crc64nvme' ? hash(name, data).toString('hex') : nodeDigest(name, data);
          expect([name, session.digests[name].hex]).toEqual([name, expected]);
          expect(session.digests[name].base64).toBe(
            Buffer.from(expected, 'hex').toString('base64'),
          );
        }
        // the last answer (final PATCH, or the POST of an empty upload) carries them too
        const listed = Object.fromEntries(
          (lastResponse.getHeader('Hashq-Digest') ?? '')
            .split(', ')
            .map((member: string) => member.split('=').map((s) => s.replace(/"/g, ''))),
        );
        expect(listed).toEqual(
          Object.fromEntries(names.map((name) => [name, session.digests[name].hex])),
        );
        if (names.includes('sha256')) {
          expect(lastResponse.getHeader('Repr-Digest')).toContain(
            `sha-256=:${createHash('sha256').update(data).digest('base64')}:`,
          );
        }
        const head = await request(url).head('').set(TUS).expect(200);
        expect(head.headers).toMatchObject({
          'upload-offset': String(size),
          'upload-length': String(size),
          'cache-control': 'no-store',
        });
        expect(head.headers['upload-metadata']).toContain(`filename ${b64('upload.bin')}`);
      },
    );
  });

  it('tus-js-client uploads 1 GiB (seeded stream, 16 MiB PATCHes): sha256, sha1, sha512, md5, crc64nvme', async () => {
    const names = ['sha256', 'sha1', 'sha512', 'md5'];
    const crc = createHasher('crc64nvme');
    const source = seededStream(1024 * MiB, 'digest-sessions 1 GiB', names, (piece) =>
      crc.update(piece),
    );
    const { url } = await tusUpload(source.stream, {
      endpoint,
      chunkSize: 16 * MiB,
      uploadSize: 1024 * MiB,
      metadata: sessionMetadata([...names, 'crc64nvme']),
    });
    const session = (await request(url).get('')).body;
    expect(session).toMatchObject({ status: 'succeeded', offset: 1024 * MiB });
    const oracle = source.digests();
    for (const name of names)
      expect([name, session.digests[name].hex]).toEqual([name, oracle[name]]);
    expect(session.digests.crc64nvme.hex).toBe(crc.digest().toString('hex'));
  }, 300_000);

  it('tus-js-client with a deferred length (creation-defer-length) declares it on the last PATCH', async () => {
    const source = seededStream(3 * MiB + 5, 'deferred', ['sha256']);
    const { url } = await tusUpload(source.stream, {
      endpoint,
      chunkSize: MiB,
      uploadLengthDeferred: true,
      metadata: sessionMetadata(['sha256']),
    });
    const session = (await request(url).get('')).body;
    expect(session).toMatchObject({
      status: 'succeeded',
      offset: 3 * MiB + 5,
      length: 3 * MiB + 5,
    });
    expect(session.digests.sha256.hex).toBe(source.digests().sha256);
  });

  it('a deferred session shows Upload-Defer-Length until a PATCH declares the length', async () => {
    const path = await create(['sha256'], 'defer');
    const head = await http().head(path).set(TUS).expect(200);
    expect(head.headers['upload-defer-length']).toBe('1');
    expect(head.headers['upload-length']).toBeUndefined();
    const data = randomBytes(1000);
    await patch(path, 0, data.subarray(0, 600)).expect(204);
    const last = await patch(path, 600, data.subarray(600), { 'Upload-Length': '1000' }).expect(
      204,
    );
    expect(last.headers['hashq-digest']).toBe(`sha256="${nodeDigest('sha256', data)}"`);
    // finished: an empty PATCH at the end gets the final answer again, one more byte is too many
    const again = await patch(path, 1000, Buffer.alloc(0)).expect(204);
    expect([again.headers['upload-offset'], again.headers['hashq-digest']]).toEqual([
      '1000',
      last.headers['hashq-digest'],
    ]);
    expectError(await patch(path, 1000, Buffer.from('x')), 413, 'UPLOAD_TOO_LARGE');
  });

  it('compares expected digests as jobs do: a mismatch ends the session failed with DIGEST_MISMATCH', async () => {
    const data = Buffer.from('hashq digest sessions');
    const right = nodeDigest('sha256', data);
    const wrong = nodeDigest('sha256', Buffer.from('something else'));
    const good = await create(['sha256'], data.length, { 'expected-sha256': right.toUpperCase() });
    await patch(good, 0, data).expect(204);
    const goodSession = (await http().get(good).expect(200)).body;
    expect(goodSession).toMatchObject({
      status: 'succeeded',
      error: null,
      options: { expected: { sha256: right } },
    });
    const shake = createHash('shake256', { outputLength: 64 }).update(data).digest('hex');
    const xof = await create(['shake256', 'shake128'], data.length, {
      outputLength: '64',
      'expected-shake256': shake,
    });
    await patch(xof, 0, data).expect(204);
    const xofSession = (await http().get(xof).expect(200)).body;
    expect(xofSession).toMatchObject({
      status: 'succeeded',
      options: { outputLength: 64 },
      digests: { shake256: { hex: shake } },
    });
    expect(xofSession.digests.shake128.hex).toBe(
      createHash('shake128', { outputLength: 64 }).update(data).digest('hex'),
    );

    const bad = await create(['sha256'], data.length, { 'expected-sha256': wrong });
    const last = await patch(bad, 0, data).expect(204);
    expect(last.headers['hashq-session-status']).toBe('failed');
    const badSession = (await http().get(bad).expect(200)).body;
    expect(badSession).toMatchObject({
      status: 'failed',
      digests: { sha256: { hex: right } },
      error: { code: 'DIGEST_MISMATCH', details: { sha256: { expected: wrong, actual: right } } },
    });
  });

  it('Upload-Checksum: 460 on a mismatch (the body counts for nothing), 400 for an unknown algorithm', async () => {
    const data = randomBytes(3000);
    const path = await create(['sha256'], data.length);
    const first = data.subarray(0, 1000);
    const sha1 = (chunk: Buffer) => createHash('sha1').update(chunk).digest('base64');
    await patch(path, 0, first, { 'Upload-Checksum': `sha1 ${sha1(first)}` }).expect(204);

    const before = await row(path);
    const second = data.subarray(1000, 2000);
    expectError(
      await patch(path, 1000, second, { 'Upload-Checksum': `sha1 ${sha1(first)}` }),
      460,
      'CHECKSUM_MISMATCH',
    );
    expect(await row(path)).toEqual(before);
    expectError(
      await patch(path, 1000, second, { 'Upload-Checksum': `sha0 ${sha1(second)}` }),
      400,
      'CHECKSUM_ALGORITHM_NOT_SUPPORTED',
    );
    expectError(
      await patch(path, 1000, second, { 'Upload-Checksum': 'sha1' }),
      400,
      'INVALID_UPLOAD_CHECKSUM',
    );
    expect(await row(path)).toEqual(before);

    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(second));
    await patch(path, 1000, second, {
      'Upload-Checksum': `crc32 ${crc.toString('base64')}`,
    }).expect(204);
    const last = await patch(path, 2000, data.subarray(2000)).expect(204);
    expect(last.headers['hashq-digest']).toBe(`sha256="${nodeDigest('sha256', data)}"`);
  });

  it('refuses bad PATCHes with typed errors and leaves the state unchanged', async () => {
    const data = randomBytes(2048);
    const path = await create(['sha256', 'crc32'], data.length);
    await patch(path, 0, data.subarray(0, 1024)).expect(204);
    const before = await row(path);
    expect(Number(before.upload_offset)).toBe(1024);

    expectError(
      await patch(path, 1024, data.subarray(1024), { 'Content-Type': 'application/octet-stream' }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    expectError(
      await http()
        .patch(path)
        .set(TUS)
        .set('Content-Type', 'application/offset+octet-stream')
        .send(data),
      400,
      'INVALID_UPLOAD_OFFSET',
    );
    for (const offset of ['-1', '1e3', '0x400', '10.5', '', 'abc']) {
      expectError(await patch(path, offset, data.subarray(1024)), 400, 'INVALID_UPLOAD_OFFSET');
    }
    expectError(await patch(path, 0, data.subarray(1024)), 409, 'OFFSET_MISMATCH');
    expectError(await patch(path, 1024, randomBytes(1025)), 413, 'UPLOAD_TOO_LARGE');
    expectError(
      await patch(path, 1024, data.subarray(1024), { 'Upload-Length': '4096' }),
      400,
      'INVALID_UPLOAD_LENGTH',
    );
    expectError(
      await patch(path, 1024, data.subarray(1024), { 'Tus-Resumable': '0.2.2' }),
      412,
      'UNSUPPORTED_TUS_VERSION',
    );
    expect(await row(path)).toEqual(before);

    // a body without Content-Length (chunked) that runs past the length is cut off at the length
    const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(`${endpoint}/${path.split('/').pop()}`, {
        method: 'PATCH',
        headers: {
          ...TUS,
          'Content-Type': 'application/offset+octet-stream',
          'Upload-Offset': '1024',
        },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (piece) => (body += piece));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      req.write(data.subarray(1024));
      req.end(randomBytes(10));
    });
    expect([chunked.status, JSON.parse(chunked.body).error.code]).toEqual([
      413,
      'UPLOAD_TOO_LARGE',
    ]);
    expect(await row(path)).toEqual(before);

    const last = await patch(path, 1024, data.subarray(1024)).expect(204);
    expect(last.headers['hashq-digest']).toBe(
      `sha256="${nodeDigest('sha256', data)}", crc32="${crc32(data).toString(16).padStart(8, '0')}"`,
    );
  });

  it('refuses bad creations with typed errors', async () => {
    const post = (headers: Record<string, string>) =>
      http().post('/v1/digest-sessions').set(headers);
    const metadata = `algorithms ${b64('sha256')}`;
    expectError(
      await post({ 'Upload-Length': '10', 'Upload-Metadata': metadata }),
      412,
      'UNSUPPORTED_TUS_VERSION',
    );
    expectError(await post({ ...TUS, 'Upload-Metadata': metadata }), 400, 'INVALID_UPLOAD_LENGTH');
    expectError(
      await post({ ...TUS, 'Upload-Length': '-5', 'Upload-Metadata': metadata }),
      400,
      'INVALID_UPLOAD_LENGTH',
    );
    expectError(
      await post({
        ...TUS,
        'Upload-Length': '10',
        'Upload-Defer-Length': '1',
        'Upload-Metadata': metadata,
      }),
      400,
      'INVALID_UPLOAD_LENGTH',
    );
    expectError(
      await post({
        ...TUS,
        'Upload-Length': String(4 * 1024 * MiB + 1),
        'Upload-Metadata': metadata,
      }),
      413,
      'UPLOAD_TOO_LARGE',
    );
    expectError(await post({ ...TUS, 'Upload-Length': '10' }), 400, 'INVALID_UPLOAD_METADATA');
    expectError(
      await post({ ...TUS, 'Upload-Length': '10', 'Upload-Metadata': 'algorithms %%%' }),
      400,
      'INVALID_UPLOAD_METADATA',
    );
    expectError(
      await post({ ...TUS, 'Upload-Length': '10', 'Upload-Metadata': `${metadata},${metadata}` }),
      400,
      'INVALID_UPLOAD_METADATA',
    );
    expectError(
      await post({
        ...TUS,
        'Upload-Length': '10',
        'Upload-Metadata': `algorithms ${b64('sha256,sha0')}`,
      }),
      400,
      'UNKNOWN_ALGORITHM',
    );
    expectError(
      await post({
        ...TUS,
        'Upload-Length': '10',
        'Upload-Metadata': `algorithms ${b64('sha256,SHA256')}`,
      }),
      400,
      'DUPLICATE_ALGORITHM',
    );
    expectError(
      await post({
        ...TUS,
        'Upload-Length': '10',
        'Upload-Metadata': `${metadata},outputLength ${b64('64')}`,
      }),
      400,
      'OUTPUT_LENGTH_NOT_SUPPORTED',
    );
    expectError(
      await post({
        ...TUS,
        'Upload-Length': '10',
        'Upload-Metadata': `${metadata},expected-sha256 ${b64('abc')}`,
      }),
      400,
      'INVALID_EXPECTED_DIGEST',
    );
    const oversized = `${metadata},filename ${b64('x'.repeat(4000))}`;
    expectError(
      await post({ ...TUS, 'Upload-Length': '10', 'Upload-Metadata': oversized }),
      400,
      'UPLOAD_METADATA_TOO_LARGE',
    );
    expect(
      (await db.query('SELECT count(*)::int AS n FROM digest_sessions WHERE upload_length = 10'))
        .rows[0].n,
    ).toBe(0);
  });

  it('answers 404 for an unknown session; DELETE ends one (204, then 404)', async () => {
    for (const id of ['6f1c0d1e-2a3b-4c5d-8e9f-0a1b2c3d4e5f', 'not-a-uuid']) {
      const path = `/v1/digest-sessions/${id}`;
      expectError(await http().get(path), 404, 'SESSION_NOT_FOUND');
      expectError(await http().head(path).set(TUS), 404, 'SESSION_NOT_FOUND');
      expectError(await patch(path, 0, Buffer.from('x')), 404, 'SESSION_NOT_FOUND');
      expectError(await http().delete(path).set(TUS), 404, 'SESSION_NOT_FOUND');
    }
    const path = await create(['sha256'], 10);
    await patch(path, 0, Buffer.from('01234')).expect(204);
    const deleted = await http().delete(path).set(TUS).expect(204);
    expect(deleted.headers['tus-resumable']).toBe('1.0.0');
    expectError(await http().head(path).set(TUS), 404, 'SESSION_NOT_FOUND');
    expectError(await patch(path, 5, Buffer.from('56789')), 404, 'SESSION_NOT_FOUND');
    expect(await row(path)).toBeUndefined();
  });

  it('expires idle sessions: 410 afterwards, and the cleanup deletes their states', async () => {
    const path = await create(['sha256'], 10);
    await patch(path, 0, Buffer.from('01234')).expect(204);
    const head = await http().head(path).set(TUS).expect(200);
    const expires = Date.parse(head.headers['upload-expires']);
    expect(expires).toBeGreaterThan(Date.now() + 86_000_000); // DIGEST_SESSION_EXPIRES_SECONDS default: one day
    await db.query(
      `UPDATE digest_sessions SET expires_at = now() - interval '1 second' WHERE id = $1`,
      [path.split('/').pop()],
    );
    expectError(await http().head(path).set(TUS), 410, 'SESSION_EXPIRED');
    expectError(await http().get(path), 410, 'SESSION_EXPIRED');
    expectError(await patch(path, 5, Buffer.from('56789')), 410, 'SESSION_EXPIRED');
    expect((await row(path)).states).not.toBeNull();

    await app.get(DigestSessionCleanup).sweep();
    expect(await row(path)).toMatchObject({ status: 'expired', states: null, upload_offset: '5' });
    expectError(await http().get(path), 410, 'SESSION_EXPIRED');
    await db.query(
      `UPDATE digest_sessions SET expires_at = now() - interval '2 days' WHERE id = $1`,
      [path.split('/').pop()],
    );
    await app.get(DigestSessionCleanup).sweep();
    expect(await row(path)).toBeUndefined();
  });

  it('a PATCH cut off mid-body keeps what arrived; HEAD tells where to resume and the digest is right', async () => {
    const data = randomBytes(8 * MiB);
    const path = await create(['sha256', 'md5'], data.length);
    await new Promise<void>((resolve) => {
      const req = httpRequest(`${endpoint}/${path.split('/').pop()}`, {
        method: 'PATCH',
        headers: {
          ...TUS,
          'Content-Type': 'application/offset+octet-stream',
          'Upload-Offset': '0',
          'Content-Length': String(data.length),
        },
      });
      req.on('error', () => resolve());
      req.write(data.subarray(0, 5 * MiB), () => setTimeout(() => req.destroy(), 200));
    });
    let offset = 0;
    for (
      const deadline = Date.now() + 20_000;
      offset === 0 && Date.now() < deadline;
      await new Promise((r) => setTimeout(r, 50))
    ) {
      offset = Number((await http().head(path).set(TUS).expect(200)).headers['upload-offset']);
    }
    expect(offset).toBeGreaterThan(0);
    expect(offset).toBeLessThanOrEqual(5 * MiB);
    const last = await patch(path, offset, data.subarray(offset)).expect(204);
    expect(last.headers['hashq-digest']).toBe(
      `sha256="${nodeDigest('sha256', data)}", md5="${nodeDigest('md5', data)}"`,
    );
  });

  /**
   * Two PATCHes of 3 MiB at offset 0 of a new 4 MiB session, sent at once by `send` (0 and 1):
   * exactly one lands (204), the other gets 409, and the digest is the winner's. `hold`, if given,
   * runs before they are sent and answers what releases them once they are.
   */
  const conflictingPatches = async (
    send: (which: number, path: string, body: Buffer) => Promise<request.Response>,
    hold?: (id: string) => Promise<() => Promise<void>>,
  ) => {
    const path = await create(['sha256'], 4 * MiB);
    const id = path.split('/').pop() as string;
    const bodies = [randomBytes(3 * MiB), randomBytes(3 * MiB)];
    const release = await hold?.(id);
    const answers = bodies.map((body, which) => send(which, path, body).then((res) => res));
    await release?.();
    const [a, b] = await Promise.all(answers);
    expect([a.status, b.status].sort()).toEqual([204, 409]);
    const loser = a.status === 409 ? a : b;
    expectError(loser, 409, 'OFFSET_MISMATCH');
    const winner = bodies[a.status === 204 ? 0 : 1];
    const rest = randomBytes(MiB);
    const last = await patch(path, 3 * MiB, rest).expect(204);
    expect(last.headers['hashq-digest']).toBe(
      `sha256="${nodeDigest('sha256', Buffer.concat([winner, rest]))}"`,
    );
  };

  it("two PATCHes at the same offset to one instance: one commits (204), the other gets 409, the digest is the winner's", async () => {
    // An instance has one write in PostgreSQL at a time: the second PATCH's commit waits for the
    // first's and its fence fails (or, once the first has landed, its offset is already behind).
    await conflictingPatches((_which, path, body) => patch(path, 0, body));
  });

  it('two PATCHes at the same offset to two instances, both commits in PostgreSQL at once: one lands', async () => {
    const other = await createApiApp(env);
    const lock = new Client({ connectionString: env.databaseUrl });
    try {
      await lock.connect();
      await conflictingPatches(
        (which, path, body) => patch(path, 0, body, {}, which === 0 ? app : other),
        // Both instances read offset 0 and hash their body; their commits wait on this row lock,
        // so both are in flight at once by construction; released, the fence lets one land.
        async (id) => {
          await lock.query('BEGIN');
          await lock.query('SELECT 1 FROM digest_sessions WHERE id = $1 FOR UPDATE', [id]);
          return async () => {
            for (;;) {
              const { rows } = await db.query(
                `SELECT count(*)::int AS n FROM pg_stat_activity
                  WHERE datname = current_database() AND wait_event_type = 'Lock'`,
              );
              if (rows[0].n === 2) break;
              await new Promise((resolve) => setTimeout(resolve, 20));
            }
            await lock.query('COMMIT');
          };
        },
      );
    } finally {
      await lock.end();
      await other.close();
    }
  });
});
