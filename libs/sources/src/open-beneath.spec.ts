import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openBeneath } from './open-beneath';
import { SourceError } from './source-error';

async function refusal(promise: Promise<unknown>): Promise<{ code: string; details: unknown }> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof SourceError) return { code: err.code, details: err.details };
    throw err;
  }
  throw new Error('expected a SourceError');
}

/**
 * The walk itself, on paths realpath would never return: what it meets when a
 * path changes between the check and the open. It must never cross a symlink
 * (even one that stays inside), never climb with `..`, and open only regular files.
 */
describe('openBeneath', () => {
  let base: string;
  let root: string;
  let socket: Server;
  const content = randomBytes(5_000);

  beforeAll(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'hashq-beneath-')));
    root = join(base, 'root');
    const outside = join(base, 'outside');
    await mkdir(join(root, 'a', 'b', 'c'), { recursive: true });
    await mkdir(join(outside, 'a', 'b', 'c'), { recursive: true });
    await writeFile(join(root, 'a', 'b', 'c', 'f'), content);
    await writeFile(join(outside, 'a', 'b', 'c', 'f'), 'secret');
    // A symlink out of the root at every component of a/b/c/f, and two that stay inside.
    await symlink(join(outside, 'a'), join(root, 'la'));
    await symlink(join(outside, 'a', 'b'), join(root, 'a', 'lb'));
    await symlink(join(outside, 'a', 'b', 'c'), join(root, 'a', 'b', 'lc'));
    await symlink(join(outside, 'a', 'b', 'c', 'f'), join(root, 'a', 'b', 'c', 'lf'));
    await symlink(join(root, 'a', 'b'), join(root, 'a', 'in-b'));
    await symlink('f', join(root, 'a', 'b', 'c', 'in-f'));
    execFileSync('mkfifo', [join(root, 'a', 'fifo')]);
    socket = createServer().listen(join(root, 'a', 'socket'));
    await once(socket, 'listening');
  });
  afterAll(async () => {
    socket.close();
    await rm(base, { recursive: true, force: true });
  });

  it('opens a regular file beneath the root and reads its bytes', async () => {
    const handle = await openBeneath(root, 'a/b/c/f', '/requested');
    try {
      expect((await handle.readFile()).equals(content)).toBe(true);
    } finally {
      await handle.close();
    }
  });

  it.each([
    ['the first component', 'la/b/c/f'],
    ['a middle component', 'a/lb/c/f'],
    ['the last directory', 'a/b/lc/f'],
    ['the last component', 'a/b/c/lf'],
    ['a directory, to inside', 'a/in-b/c/f'],
    ['the last component, to inside', 'a/b/c/in-f'],
  ])('refuses a symlink at %s (%s) with nothing but the requested path', async (_name, relative) => {
    expect(await refusal(openBeneath(root, relative, '/requested'))).toEqual({
      code: 'PATH_OUTSIDE_ROOTS',
      details: { path: '/requested' },
    });
  });

  it.each(['a/../a/b/c/f', 'a/b/c/..', './a/b/c/f', 'a//b/c/f', 'a/b/c/f/'])('refuses a non-canonical path: %s', async (relative) => {
    expect((await refusal(openBeneath(root, relative, '/requested'))).code).toBe('PATH_OUTSIDE_ROOTS');
  });

  it.each([
    ['a FIFO (without blocking)', 'a/fifo', 'NOT_A_REGULAR_FILE'],
    ['a Unix socket bound at the last component', 'a/socket', 'NOT_A_REGULAR_FILE'],
    ['a directory', 'a/b', 'NOT_A_REGULAR_FILE'],
    ['the root itself', '', 'NOT_A_REGULAR_FILE'],
    ['a file used as a directory', 'a/b/c/f/g', 'SOURCE_NOT_FOUND'],
    ['a missing name', 'a/missing', 'SOURCE_NOT_FOUND'],
  ])('refuses %s', async (_name, relative, code) => {
    expect((await refusal(openBeneath(root, relative, '/requested'))).code).toBe(code);
  });
});
