import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import {
  appendFile,
  link,
  mkdir,
  mkdtemp,
  realpath,
  rename,
  rm,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { FileRoots } from './file-roots';
import { FileSource } from './file-source';
import { fsErrorToSourceError } from './fs-errors';
import type { OpenedSource } from './source';
import { SourceError } from './source-error';
import { SourceFactory } from './source-factory';

async function readAll(opened: OpenedSource): Promise<{ bytes: Buffer; chunks: number[] }> {
  const parts: Buffer[] = [];
  try {
    for await (const chunk of opened.stream) parts.push(Buffer.from(chunk)); // copies: the source reuses its buffers
  } finally {
    await opened.close();
  }
  return { bytes: Buffer.concat(parts), chunks: parts.map((part) => part.length) };
}

async function refusal(promise: Promise<unknown>): Promise<SourceError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof SourceError) return err;
    throw err;
  }
  throw new Error('expected a SourceError');
}

describe('FileSource', () => {
  let base: string;
  let root: string;
  let outside: string;
  let roots: FileRoots;
  let socket: Server;
  const content = randomBytes(100_000);

  beforeAll(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'hashq-sources-')));
    root = join(base, 'root');
    outside = join(base, 'outside');
    await mkdir(join(root, 'sub'), { recursive: true });
    await mkdir(outside);
    await writeFile(join(root, 'data.bin'), content);
    await writeFile(join(outside, 'secret.bin'), 'secret');
    await symlink(join(outside, 'secret.bin'), join(root, 'link-out'));
    await symlink(join(root, 'data.bin'), join(root, 'sub', 'link-in'));
    await symlink(outside, join(root, 'dir-out'));
    execFileSync('mkfifo', [join(root, 'fifo')]);
    socket = createServer().listen(join(root, 'socket'));
    await once(socket, 'listening');
    roots = new FileRoots([root]);
  });
  afterAll(async () => {
    socket.close();
    await rm(base, { recursive: true, force: true });
  });

  const source = (path: string) => new FileSource(path, roots);

  it('reads the whole file in chunks of the requested size and reports its identity', async () => {
    const opened = await source(join(root, 'data.bin')).open(0, null, { chunkBytes: 16_384 });
    const { bytes, chunks } = await readAll(opened);
    expect(bytes.equals(content)).toBe(true);
    expect(Math.max(...chunks)).toBeLessThanOrEqual(16_384);
    expect(opened.size).toBe(content.length);
    expect(opened.version).toMatchObject({ size: content.length });
    expect(typeof opened.version.mtimeMs).toBe('number');
    expect(typeof opened.version.ino).toBe('string');
  });

  it('starts at the offset when the version is unchanged', async () => {
    const file = source(join(root, 'data.bin'));
    const first = await file.open(0);
    await first.close();
    const opened = await file.open(65_536, first.version);
    const { bytes } = await readAll(opened);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(
      createHash('sha256').update(content.subarray(65_536)).digest('hex'),
    );
  });

  it('yields nothing at the end of the file', async () => {
    const opened = await source(join(root, 'data.bin')).open(content.length);
    expect((await readAll(opened)).bytes.length).toBe(0);
  });

  it('refuses to resume a file that changed (mtime, size or inode) or an offset past its end', async () => {
    const path = join(root, 'changing.bin');
    await writeFile(path, content);
    const file = source(path);
    const { version, close } = await file.open(0);
    await close();
    await utimes(path, new Date(), new Date(Date.now() + 5_000));
    const changed = await refusal(file.open(10, version));
    // The fields that differ and the sizes, never an inode or an mtime.
    expect({ code: changed.code, details: changed.details }).toEqual({
      code: 'SOURCE_CHANGED',
      details: {
        path,
        changed: ['mtimeMs'],
        expected: { size: content.length },
        actual: { size: content.length },
      },
    });
    await writeFile(path, content.subarray(0, 10)); // shorter
    const now = await file.currentVersion();
    const past = await refusal(file.open(11, now));
    expect({ code: past.code, details: past.details }).toEqual({
      code: 'SOURCE_CHANGED',
      details: { path, offset: 11, size: 10 },
    });
  });

  it('asks the open descriptor, not the path, for the identity at the end of a read', async () => {
    const path = join(root, 'pinned.bin');
    await writeFile(path, content);
    await link(path, join(root, 'pinned-link.bin'));
    const file = source(path);
    const opened = await file.open(0);
    try {
      await writeFile(join(root, 'replacement.bin'), content);
      await rename(join(root, 'replacement.bin'), path); // the path now names another file
      expect(await opened.currentVersion!()).toEqual(opened.version);
      expect((await file.currentVersion()).ino).not.toBe(opened.version.ino);
      await appendFile(join(root, 'pinned-link.bin'), 'x'); // the file being read grows
      expect((await opened.currentVersion!()).size).toBe(content.length + 1);
    } finally {
      await opened.close();
    }
  });

  it('accepts a symlink that stays inside a root', async () => {
    const opened = await source(join(root, 'sub', 'link-in')).open(0);
    expect((await readAll(opened)).bytes.equals(content)).toBe(true);
  });

  it.each([
    ['a symlink out of the root', () => join(root, 'link-out'), 'PATH_OUTSIDE_ROOTS'],
    ['a path with ..', () => `${root}/sub/../../outside/secret.bin`, 'PATH_OUTSIDE_ROOTS'],
    ['a path with .. that stays inside', () => `${root}/sub/../data.bin`, 'PATH_OUTSIDE_ROOTS'],
    ['a file outside every root', () => join(outside, 'secret.bin'), 'PATH_OUTSIDE_ROOTS'],
    ['a relative path', () => 'data.bin', 'PATH_OUTSIDE_ROOTS'],
    [
      'a root-name prefix that is not the root',
      () => `${root}-evil/data.bin`,
      'PATH_OUTSIDE_ROOTS',
    ],
    ['a missing file', () => join(root, 'missing.bin'), 'SOURCE_NOT_FOUND'],
    ['a directory', () => join(root, 'sub'), 'NOT_A_REGULAR_FILE'],
    ['a FIFO (must not block)', () => join(root, 'fifo'), 'NOT_A_REGULAR_FILE'],
    ['a Unix socket', () => join(root, 'socket'), 'NOT_A_REGULAR_FILE'],
    [
      'a path through a symlink to a folder outside',
      () => join(root, 'dir-out', 'secret.bin'),
      'PATH_OUTSIDE_ROOTS',
    ],
  ])('refuses %s, naming only the requested path', async (_name, path, code) => {
    const err = await refusal(source(path()).open(0));
    expect({ code: err.code, details: err.details }).toEqual({ code, details: { path: path() } }); // no roots
  });

  it('maps permission errors to SOURCE_FORBIDDEN and I/O errors to a transient code', () => {
    const eacces = Object.assign(new Error('denied'), { code: 'EACCES' });
    const eio = Object.assign(new Error('io'), { code: 'EIO' });
    expect(fsErrorToSourceError(eacces, '/x')).toMatchObject({
      code: 'SOURCE_FORBIDDEN',
      permanent: true,
    });
    expect(fsErrorToSourceError(eio, '/x')).toMatchObject({
      code: 'SOURCE_READ_FAILED',
      permanent: false,
    });
  });

  it('builds file sources from stored specs and refuses unknown types', () => {
    const factory = new SourceFactory(roots);
    expect(factory.create({ type: 'file', path: join(root, 'data.bin') })).toBeInstanceOf(
      FileSource,
    );
    expect(() => factory.create({ type: 'ftp', url: 'ftp://x' })).toThrow(SourceError);
  });
});
