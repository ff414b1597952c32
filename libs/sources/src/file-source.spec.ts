import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileRoots } from './file-roots';
import { FileSource } from './file-source';
import { fsErrorToSourceError } from './fs-errors';
import { SourceError } from './source-error';
import { SourceFactory } from './source-factory';

async function readAll(stream: AsyncIterable<Buffer>): Promise<{ bytes: Buffer; chunks: number[] }> {
  const parts: Buffer[] = [];
  for await (const chunk of stream) parts.push(Buffer.from(chunk)); // copies: the source reuses its buffers
  return { bytes: Buffer.concat(parts), chunks: parts.map((part) => part.length) };
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof SourceError) return err.code;
    throw err;
  }
  throw new Error('expected a SourceError');
}

describe('FileSource', () => {
  let base: string;
  let root: string;
  let outside: string;
  let roots: FileRoots;
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
    execFileSync('mkfifo', [join(root, 'fifo')]);
    roots = new FileRoots([root]);
  });
  afterAll(() => rm(base, { recursive: true, force: true }));

  const source = (path: string) => new FileSource(path, roots);

  it('reads the whole file in chunks of the requested size and reports its identity', async () => {
    const opened = await source(join(root, 'data.bin')).open(0, null, { chunkBytes: 16_384 });
    const { bytes, chunks } = await readAll(opened.stream);
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
    const { bytes } = await readAll(opened.stream);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(
      createHash('sha256').update(content.subarray(65_536)).digest('hex'),
    );
  });

  it('yields nothing at the end of the file', async () => {
    const opened = await source(join(root, 'data.bin')).open(content.length);
    expect((await readAll(opened.stream)).bytes.length).toBe(0);
  });

  it('refuses to resume a file that changed (mtime, size or inode) or an offset past its end', async () => {
    const path = join(root, 'changing.bin');
    await writeFile(path, content);
    const file = source(path);
    const { version, close } = await file.open(0);
    await close();
    await utimes(path, new Date(), new Date(Date.now() + 5_000));
    expect(await codeOf(file.open(10, version))).toBe('SOURCE_CHANGED');
    await writeFile(path, content.subarray(0, 10)); // shorter
    const now = await file.currentVersion();
    expect(await codeOf(file.open(11, now))).toBe('SOURCE_CHANGED');
  });

  it('accepts a symlink that stays inside a root', async () => {
    const opened = await source(join(root, 'sub', 'link-in')).open(0);
    expect((await readAll(opened.stream)).bytes.equals(content)).toBe(true);
  });

  it.each([
    ['a symlink out of the root', () => join(root, 'link-out'), 'PATH_OUTSIDE_ROOTS'],
    ['a path with ..', () => `${root}/sub/../../outside/secret.bin`, 'PATH_OUTSIDE_ROOTS'],
    ['a path with .. that stays inside', () => `${root}/sub/../data.bin`, 'PATH_OUTSIDE_ROOTS'],
    ['a file outside every root', () => join(outside, 'secret.bin'), 'PATH_OUTSIDE_ROOTS'],
    ['a relative path', () => 'data.bin', 'PATH_OUTSIDE_ROOTS'],
    ['a root-name prefix that is not the root', () => `${root}-evil/data.bin`, 'PATH_OUTSIDE_ROOTS'],
    ['a missing file', () => join(root, 'missing.bin'), 'SOURCE_NOT_FOUND'],
    ['a directory', () => join(root, 'sub'), 'NOT_A_REGULAR_FILE'],
    ['a FIFO (must not block)', () => join(root, 'fifo'), 'NOT_A_REGULAR_FILE'],
  ])('refuses %s', async (_name, path, code) => {
    expect(await codeOf(source(path()).open(0))).toBe(code);
  });

  it('maps permission errors to SOURCE_FORBIDDEN and I/O errors to a transient code', () => {
    const eacces = Object.assign(new Error('denied'), { code: 'EACCES' });
    const eio = Object.assign(new Error('io'), { code: 'EIO' });
    expect(fsErrorToSourceError(eacces, '/x')).toMatchObject({ code: 'SOURCE_FORBIDDEN', permanent: true });
    expect(fsErrorToSourceError(eio, '/x')).toMatchObject({ code: 'SOURCE_READ_FAILED', permanent: false });
  });

  it('builds file sources from stored specs and refuses unknown types', () => {
    const factory = new SourceFactory(roots);
    expect(factory.create({ type: 'file', path: join(root, 'data.bin') })).toBeInstanceOf(FileSource);
    expect(() => factory.create({ type: 'ftp', url: 'ftp://x' })).toThrow(SourceError);
  });
});
