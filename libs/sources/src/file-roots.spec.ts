import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { openSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { DescriptorFile } from './descriptor-file';
import { FileRoots, type FileStats } from './file-roots';
import { SourceError } from './source-error';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const openFds = (): number => readdirSync('/proc/self/fd').length;

/** Everything a caller of openRegularFile sees: the file (name, fstat, bytes) or the refusal. */
async function answer(roots: FileRoots, path: string): Promise<unknown> {
  try {
    const file = await roots.openRegularFile(path);
    try {
      const bytes = Buffer.alloc(Number(file.stats.size));
      for (let at = 0; at < bytes.length;) {
        const { bytesRead } = await file.handle.read(bytes, at, bytes.length - at, at);
        if (bytesRead === 0) break;
        at += bytesRead;
      }
      const fstat = await file.handle.stat({ bigint: true });
      return {
        path: file.path,
        stats: identity(file.stats),
        fstat: identity(fstat),
        sha: sha256(bytes),
      };
    } finally {
      await file.handle.close();
    }
  } catch (err) {
    if (err instanceof SourceError)
      return { code: err.code, message: err.message, details: err.details };
    throw err;
  }
}

function identity({ size, mtimeNs, dev, ino, mode }: FileStats): FileStats {
  return { size, mtimeNs, dev, ino, mode };
}

/**
 * The native open is a fast path only: for every path, FileRoots answers exactly as the JS walk
 * alone does (file, name and fstat, or the refusal's code, message and details).
 */
describe('FileRoots: the native open answers as the walk', () => {
  let base: string;
  let root: string;
  let other: string;
  let outside: string;
  let socket: Server;
  let paths: string[];
  let fast: FileRoots;
  let walk: FileRoots;
  const content = randomBytes(5_000);
  const inRoot = (...names: string[]) => join(root, ...names);
  /** Requests name files through the root's configured path (a symlink to `root`). */
  const viaRoot = (...names: string[]) => join(base, 'root-link', ...names);

  beforeAll(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'hashq-roots-')));
    root = join(base, 'root');
    other = join(base, 'other');
    outside = join(base, 'outside');
    await mkdir(inRoot('a', 'b', 'c'), { recursive: true });
    await mkdir(join(outside, 'a'), { recursive: true });
    await mkdir(other);
    await writeFile(inRoot('a', 'b', 'c', 'f'), content);
    await writeFile(inRoot('empty'), '');
    await writeFile(join(other, 'g'), 'in the other root');
    await writeFile(join(outside, 'a', 'f'), 'secret');
    await symlink(join(outside, 'a'), inRoot('out-abs'));
    await symlink('../../outside/a/f', inRoot('a', 'out-rel'));
    await symlink('../../root/a/b/c/f', inRoot('a', 'up-and-in'));
    await symlink('../a/b', inRoot('a', 'in-b'));
    await symlink('c/f', inRoot('a', 'b', 'in-f'));
    await symlink(inRoot('a', 'b'), inRoot('abs-b'));
    await symlink(join(base, 'root-link', 'a', 'b', 'c', 'f'), inRoot('via-lexical'));
    await symlink(join(other, 'g'), inRoot('to-other'));
    await symlink('missing', inRoot('dangling'));
    await symlink('loop-2', inRoot('loop-1'));
    await symlink('loop-1', inRoot('loop-2'));
    await symlink(root, join(base, 'root-link'));
    execFileSync('mkfifo', [inRoot('a', 'fifo')]);
    socket = createServer().listen(inRoot('a', 'socket'));
    await once(socket, 'listening');
    const configured = [join(base, 'root-link'), other];
    fast = new FileRoots(configured);
    walk = new FileRoots(configured, { native: false });
    paths = [
      viaRoot('a', 'b', 'c', 'f'),
      inRoot('a', 'b', 'c', 'f'), // the real path: not under a configured root
      viaRoot('a', 'in-b', 'c', 'f'),
      viaRoot('a', 'b', 'in-f'),
      viaRoot('a', 'up-and-in'),
      viaRoot('abs-b', 'c', 'f'),
      viaRoot('via-lexical'),
      viaRoot('to-other'),
      viaRoot('empty'),
      join(other, 'g'),
      viaRoot('out-abs', 'f'),
      viaRoot('a', 'out-rel'),
      viaRoot('dangling'),
      viaRoot('loop-1'),
      viaRoot('a', 'fifo'),
      viaRoot('a', 'socket'),
      viaRoot('a', 'b'),
      viaRoot(),
      viaRoot('a', 'b', 'c', 'f', 'g'),
      viaRoot('a', 'missing'),
      viaRoot('x'.repeat(300)),
      `${viaRoot()}/a/../../outside/a/f`,
      join(outside, 'a', 'f'),
      'relative/path',
    ];
  });

  afterAll(async () => {
    socket.close();
    await rm(base, { recursive: true, force: true });
  });

  it('gives the same file or the same refusal for every fixture path', async () => {
    for (const path of paths)
      expect([path, await answer(fast, path)]).toEqual([path, await answer(walk, path)]);
  });

  it('takes the native path for a plain file (a descriptor of its own, not a FileHandle)', async () => {
    const file = await fast.openRegularFile(viaRoot('a', 'b', 'c', 'f'));
    try {
      expect(file.handle).toBeInstanceOf(DescriptorFile);
      expect(file.stats.ino).toBe((await stat(inRoot('a', 'b', 'c', 'f'), { bigint: true })).ino);
    } finally {
      await file.handle.close();
    }
  });

  it('locateRegularFile gives the name and fstat of openRegularFile and leaves nothing open', async () => {
    const before = openFds();
    for (const path of paths) {
      const located = await fast.locateRegularFile(path).then(
        ({ path: real, stats }) => ({ path: real, stats: identity(stats) }),
        (err: unknown) =>
          err instanceof SourceError ? { code: err.code, message: err.message } : err,
      );
      const opened = (await answer(walk, path)) as Record<string, unknown>;
      const want =
        'code' in opened
          ? { code: opened.code, message: opened.message }
          : { path: opened.path, stats: opened.stats };
      expect([path, located]).toEqual([path, want]);
    }
    expect(openFds()).toBe(before);
  });

  it('random paths through the tree: the same answers (seed printed on failure)', async () => {
    const seed = Number(process.env.HASHQ_TEST_SEED ?? Date.now() % 2 ** 31);
    let s = seed;
    const next = (n: number) => ((s = (s * 1103515245 + 12345) % 2 ** 31), s % n);
    const names = ['a', 'b', 'c', 'f', 'in-b', 'in-f', 'abs-b', 'out-abs', 'out-rel', 'up-and-in'];
    names.push('to-other', 'loop-1', 'dangling', 'fifo', 'socket', 'empty', '.', '', 'via-lexical');
    const before = openFds();
    for (let round = 0; round < 300; round++) {
      const path = [
        root,
        ...Array.from({ length: 1 + next(5) }, () => names[next(names.length)]),
      ].join('/');
      const ctx = `seed ${seed} round ${round} ${path}`;
      expect([ctx, await answer(fast, path)]).toEqual([ctx, await answer(walk, path)]);
    }
    expect(openFds()).toBe(before);
  });
});

describe('DescriptorFile', () => {
  let dir: string;
  let file: string;
  const bytes = randomBytes(1 << 20);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hashq-descriptor-'));
    file = join(dir, 'f');
    await writeFile(file, bytes);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('reads and fstats like a FileHandle, closes once, refuses calls after close', async () => {
    const handle = new DescriptorFile(openSync(file, 'r'));
    const buffer = Buffer.alloc(100);
    expect(await handle.read(buffer, 10, 50, 1000)).toEqual({ bytesRead: 50 });
    expect(buffer.subarray(10, 60)).toEqual(bytes.subarray(1000, 1050));
    expect((await handle.stat({ bigint: true })).size).toBe(BigInt(bytes.length));
    await Promise.all([handle.close(), handle.close()]);
    await handle.close();
    await expect(handle.read(buffer, 0, 1, 0)).rejects.toMatchObject({ code: 'EBADF' });
    await expect(handle.stat({ bigint: true })).rejects.toMatchObject({ code: 'EBADF' });
  });

  it('close waits for the reads in flight: their number is not reused under them', async () => {
    const before = openFds();
    const handle = new DescriptorFile(openSync(file, 'r'));
    const parts = Array.from({ length: 16 }, () => Buffer.alloc(bytes.length / 16));
    const reads = parts.map((part, i) => handle.read(part, 0, part.length, i * part.length));
    const closed = handle.close();
    const results = await Promise.all(reads);
    await closed;
    expect(results.every((r) => r.bytesRead === bytes.length / 16)).toBe(true);
    expect(Buffer.concat(parts).equals(bytes)).toBe(true);
    expect(openFds()).toBe(before);
  });
});
