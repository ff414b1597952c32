import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { openBeneath, type WalkRoot } from './open-beneath';
import { SourceError } from './source-error';

async function refusal(
  promise: Promise<unknown>,
): Promise<{ code: string; message: string; details: unknown }> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof SourceError)
      return { code: err.code, message: err.message, details: err.details };
    throw err;
  }
  throw new Error('expected a SourceError');
}

/**
 * The walk that resolves a path beneath the roots one name at a time: symlinks
 * inside a root are resolved, anything leading out is refused before it is
 * looked up, and only a regular file is opened.
 */
describe('openBeneath', () => {
  let base: string;
  let root: string;
  let outside: string;
  let roots: WalkRoot[];
  let socket: Server;
  const content = randomBytes(5_000);
  const inRoot = (...names: string[]) => join(root, ...names);

  async function readBeneath(path: string): Promise<{ path: string; bytes: Buffer }> {
    const opened = await openBeneath(roots, path, '/requested');
    try {
      return { path: opened.path, bytes: await opened.handle.readFile() };
    } finally {
      await opened.handle.close();
    }
  }

  beforeAll(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'hashq-beneath-')));
    root = join(base, 'root');
    outside = join(base, 'outside');
    await mkdir(inRoot('a', 'b', 'c'), { recursive: true });
    await mkdir(join(outside, 'a', 'b', 'c'), { recursive: true });
    await writeFile(inRoot('a', 'b', 'c', 'f'), content);
    await writeFile(join(outside, 'a', 'b', 'c', 'f'), 'secret');
    // A symlink out of the root at every component of a/b/c/f.
    await symlink(join(outside, 'a'), inRoot('la'));
    await symlink(join(outside, 'a', 'b'), inRoot('a', 'lb'));
    await symlink(join(outside, 'a', 'b', 'c'), inRoot('a', 'b', 'lc'));
    await symlink(join(outside, 'a', 'b', 'c', 'f'), inRoot('a', 'b', 'c', 'lf'));
    await symlink(join(outside, 'missing'), inRoot('a', 'l-missing'));
    await symlink('../../../outside/a/b/c/f', inRoot('a', 'b', 'l-up'));
    await symlink('../../root/a/b/c/f', inRoot('a', 'l-up-and-in'));
    // Symlinks that stay inside: relative with .., absolute, through the root's configured path.
    await symlink('../a/b', inRoot('a', 'in-b'));
    await symlink('c/f', inRoot('a', 'b', 'in-f'));
    await symlink(inRoot('a', 'b'), inRoot('abs-b'));
    await symlink(join(base, 'root-link', 'a', 'b', 'c', 'f'), inRoot('via-lexical'));
    await symlink('loop-2', inRoot('loop-1'));
    await symlink('loop-1', inRoot('loop-2'));
    await symlink(root, join(base, 'root-link'));
    execFileSync('mkfifo', [inRoot('a', 'fifo')]);
    socket = createServer().listen(inRoot('a', 'socket'));
    await once(socket, 'listening');
    roots = [{ lexical: join(base, 'root-link'), real: root }];
  });
  afterAll(async () => {
    socket.close();
    await rm(base, { recursive: true, force: true });
  });

  it.each([
    ['its real path', () => inRoot('a', 'b', 'c', 'f')],
    ["the root's configured path", () => join(base, 'root-link', 'a', 'b', 'c', 'f')],
    ['a relative symlink with ..', () => inRoot('a', 'in-b', 'c', 'f')],
    ['a relative symlink at the last component', () => inRoot('a', 'b', 'in-f')],
    ['an absolute symlink inside the root', () => inRoot('abs-b', 'c', 'f')],
    ["an absolute symlink through the root's configured path", () => inRoot('via-lexical')],
  ])('opens a regular file through %s and reports its real path', async (_name, path) => {
    const opened = await readBeneath(path());
    expect(opened.bytes.equals(content)).toBe(true);
    expect(opened.path).toBe(inRoot('a', 'b', 'c', 'f'));
  });

  it.each([
    ['the first component', () => inRoot('la', 'b', 'c', 'f')],
    ['a middle component', () => inRoot('a', 'lb', 'c', 'f')],
    ['the last folder', () => inRoot('a', 'b', 'lc', 'f')],
    ['the last component', () => inRoot('a', 'b', 'c', 'lf')],
    ['a relative target climbing out', () => inRoot('a', 'b', 'l-up')],
    ['a relative target climbing out and back in', () => inRoot('a', 'l-up-and-in')],
  ])(
    'refuses a symlink out of the root at %s, naming only the requested path',
    async (_name, path) => {
      expect(await refusal(openBeneath(roots, path(), '/requested'))).toEqual({
        code: 'PATH_OUTSIDE_ROOTS',
        message: 'file path is outside the allowed roots',
        details: { path: '/requested' },
      });
    },
  );

  it('answers alike for a symlink to a missing and to an existing outside file: none is looked up', async () => {
    const missing = await refusal(openBeneath(roots, inRoot('a', 'l-missing'), '/requested'));
    const existing = await refusal(openBeneath(roots, inRoot('a', 'b', 'c', 'lf'), '/requested'));
    expect(missing).toEqual(existing);
  });

  it.each([
    ['a path outside every root', () => join(outside, 'a', 'b', 'c', 'f'), 'PATH_OUTSIDE_ROOTS'],
    ['.. above the root', () => `${root}/a/../../outside/a/b/c/f`, 'PATH_OUTSIDE_ROOTS'],
    ['a symlink loop', () => inRoot('loop-1'), 'PATH_OUTSIDE_ROOTS'],
    ['a FIFO (without blocking)', () => inRoot('a', 'fifo'), 'NOT_A_REGULAR_FILE'],
    [
      'a Unix socket bound at the last component',
      () => inRoot('a', 'socket'),
      'NOT_A_REGULAR_FILE',
    ],
    ['a directory', () => inRoot('a', 'b'), 'NOT_A_REGULAR_FILE'],
    ['the root itself', () => root, 'NOT_A_REGULAR_FILE'],
    ['a file used as a folder', () => inRoot('a', 'b', 'c', 'f', 'g'), 'SOURCE_NOT_FOUND'],
    ['a missing name', () => inRoot('a', 'missing'), 'SOURCE_NOT_FOUND'],
  ])('refuses %s', async (_name, path, code) => {
    const err = await refusal(openBeneath(roots, path(), '/requested'));
    expect({ code: err.code, details: err.details }).toEqual({
      code,
      details: { path: '/requested' },
    });
  });
});
