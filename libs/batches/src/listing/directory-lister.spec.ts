import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { FileRoots, SourceError } from '@hashq/sources';

import { DirectoryLister, type SkipReason } from './directory-lister';
import type { ListedItem, Lister } from './types';

/** Depth-first, each folder's names in byte order: compare path segment by segment. */
function walkOrder(a: string, b: string): number {
  const x = a.split('/');
  const y = b.split('/');
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const c = Buffer.compare(Buffer.from(x[i]), Buffer.from(y[i]));
    if (c !== 0) return c;
  }
  return x.length - y.length;
}

/** The oracle: find(1)'s regular files and their sizes, relative to `dir`. */
function findSizes(dir: string): Map<string, number> {
  const out = execFileSync('find', ['.', '-type', 'f', '-printf', '%s %P\\0'], { cwd: dir });
  const entries = out
    .toString('utf8')
    .split('\0')
    .filter((line) => line !== '')
    .map((line): [string, number] => {
      const space = line.indexOf(' ');
      return [line.slice(space + 1), Number(line.slice(0, space))];
    });
  return new Map(entries);
}

function findFiles(dir: string): string[] {
  return [...findSizes(dir).keys()];
}

async function listAll(lister: Lister, pageSize: number): Promise<ListedItem[]> {
  const all: ListedItem[] = [];
  let cursor: string | null = null;
  do {
    const page = await lister.page(cursor, pageSize);
    expect(page.items.length).toBeLessThanOrEqual(pageSize);
    all.push(...page.items);
    cursor = page.cursor;
  } while (cursor !== null);
  return all;
}

const HARD_NAMES = [
  'plain.txt',
  'with space.txt',
  ' leading space',
  '*star',
  'back\\slash',
  'new\nline',
  'cr\rname',
  'été.txt',
  '😀 emoji',
  'a-b', // '-' sorts before '/': the folder "a" still comes first, depth first
  'Z-upper',
  '\uffff-bmp-end', // above the surrogates in UTF-16 order, below the emoji in bytes
];

describe('DirectoryLister', () => {
  let root: string;
  let tree: string;
  let outside: string;
  let roots: FileRoots;

  beforeAll(() => {
    const tmp = mkdtempSync(join(tmpdir(), 'hashq-dirlist-'));
    root = join(tmp, 'root');
    outside = join(tmp, 'outside');
    mkdirSync(outside, { recursive: true });
    writeFileSync(join(outside, 'secret'), 'secret');
    tree = join(root, 'tree');
    let n = 0;
    const make = (dir: string, depth: number) => {
      mkdirSync(dir, { recursive: true });
      for (const name of HARD_NAMES) writeFileSync(join(dir, name), `${n++}`);
      if (depth === 0) return;
      for (const sub of ['a', 'sub dir', 'é', 'empty-parent']) make(join(dir, sub), depth - 1);
    };
    make(tree, 2);
    mkdirSync(join(tree, 'empty'));
    mkdirSync(join(tree, 'only-empty', 'deeper', 'deepest'), { recursive: true });
    roots = new FileRoots([root]);
  });

  afterAll(() => rmSync(join(root, '..'), { recursive: true, force: true }));

  it('lists every regular file exactly once, depth first in byte order, with sizes', async () => {
    const lister = new DirectoryLister({ roots, path: tree });
    const items = await listAll(lister, 1000);
    const expected = findFiles(tree).sort(walkOrder);
    expect(items.map((item) => item.name)).toEqual(expected);
    expect(expected.length).toBe(HARD_NAMES.length * (1 + 4 + 16));
    const sizes = findSizes(tree);
    for (const item of items) {
      expect(item.source).toEqual({ type: 'file', path: join(tree, item.name) });
      expect(item.size).toBe(sizes.get(item.name));
    }
  });

  it('resumes after every cursor with the rest of one full listing (fresh listers)', async () => {
    const full = await listAll(new DirectoryLister({ roots, path: tree }), 10_000);
    const names = full.map((item) => item.name);
    for (let i = 0; i < names.length; i++) {
      const lister = new DirectoryLister({ roots, path: tree, sizes: false });
      const page = await lister.page(names[i], 10_000);
      expect(page.items.map((item) => item.name)).toEqual(names.slice(i + 1));
      expect(page.cursor).toBeNull();
    }
  });

  it.each([1, 2, 7, 64])('pages of %i chain into the full listing', async (size) => {
    const full = await listAll(new DirectoryLister({ roots, path: tree }), 10_000);
    const paged = await listAll(new DirectoryLister({ roots, path: tree }), size);
    expect(paged).toEqual(full);
  });

  it('resumes from a cursor whose file or folder is gone', async () => {
    const lister = new DirectoryLister({ roots, path: tree, sizes: false });
    const names = (await listAll(lister, 10_000)).map((item) => item.name);
    const vanished = ['a/sub dir/gone', 'a/zzz-gone-folder/x', 'b-gone', 'sub dir/a/b/c'];
    for (const cursor of vanished) {
      const page = await new DirectoryLister({ roots, path: tree, sizes: false }).page(
        cursor,
        10_000,
      );
      expect(page.items.map((item) => item.name)).toEqual(
        names.filter((name) => walkOrder(name, cursor) > 0),
      );
    }
  });

  it('non-recursive lists only the top folder', async () => {
    const items = await listAll(new DirectoryLister({ roots, path: tree, recursive: false }), 5);
    expect(items.map((item) => item.name)).toEqual(
      [...HARD_NAMES].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))),
    );
  });

  it('filters by an include glob and still resumes', async () => {
    const include = '**/*.txt';
    const items = await listAll(new DirectoryLister({ roots, path: tree, include }), 3);
    const expected = findFiles(tree)
      .filter((name) => name.endsWith('.txt'))
      .sort(walkOrder);
    expect(items.map((item) => item.name)).toEqual(expected);
    const resumed = await new DirectoryLister({ roots, path: tree, include }).page(
      expected[5],
      1000,
    );
    expect(resumed.items.map((item) => item.name)).toEqual(expected.slice(6));
  });

  it('an empty directory is finished at once', async () => {
    const lister = new DirectoryLister({ roots, path: join(tree, 'only-empty') });
    expect(await lister.page(null, 10)).toEqual({ items: [], cursor: null });
  });

  describe('what is not a regular file inside the roots', () => {
    let dir: string;
    const skipped: Array<[string, SkipReason]> = [];

    beforeAll(() => {
      dir = join(root, 'links');
      mkdirSync(join(dir, 'real-folder'), { recursive: true });
      writeFileSync(join(dir, 'real-folder', 'inner'), 'inner');
      writeFileSync(join(dir, 'target.bin'), 'target');
      symlinkSync('target.bin', join(dir, 'link-inside'));
      symlinkSync(join(outside, 'secret'), join(dir, 'link-outside'));
      symlinkSync('../../outside/secret', join(dir, 'link-outside-relative'));
      symlinkSync('real-folder', join(dir, 'link-to-folder'));
      symlinkSync('nowhere', join(dir, 'link-dangling'));
      execFileSync('mkfifo', [join(dir, 'fifo')]);
      writeFileSync(Buffer.from(`${dir}/latin1-\xe9`, 'latin1'), 'not utf-8');
    });

    it('follows links to files inside the roots, skips and reports the rest', async () => {
      const lister = new DirectoryLister({
        roots,
        path: dir,
        onSkipped: (name, reason) => skipped.push([name, reason]),
      });
      const items = await listAll(lister, 100);
      expect(items).toEqual([
        { name: 'link-inside', source: { type: 'file', path: join(dir, 'target.bin') }, size: 6 },
        {
          name: 'real-folder/inner',
          source: { type: 'file', path: join(dir, 'real-folder', 'inner') },
          size: 5,
        },
        { name: 'target.bin', source: { type: 'file', path: join(dir, 'target.bin') }, size: 6 },
      ]);
      expect(Object.fromEntries(skipped.map(([name, reason]) => [name, reason]))).toEqual({
        fifo: 'NOT_A_REGULAR_FILE',
        'latin1-\ufffd': 'NAME_NOT_UTF8',
        'link-dangling': 'SOURCE_NOT_FOUND',
        'link-outside': 'PATH_OUTSIDE_ROOTS',
        'link-outside-relative': 'PATH_OUTSIDE_ROOTS',
        'link-to-folder': 'NOT_A_REGULAR_FILE',
      });
    });

    it('refuses a directory outside the roots, through a link or missing', async () => {
      symlinkSync(outside, join(root, 'door'));
      const refusal = (path: string) =>
        new DirectoryLister({ roots, path }).page(null, 10).catch((err: SourceError) => err.code);
      expect(await refusal(outside)).toBe('PATH_OUTSIDE_ROOTS');
      expect(await refusal(join(root, 'door'))).toBe('PATH_OUTSIDE_ROOTS');
      expect(await refusal(join(root, 'tree', '..', '..', 'outside'))).toBe('PATH_OUTSIDE_ROOTS');
      expect(await refusal('relative/path')).toBe('PATH_OUTSIDE_ROOTS');
      expect(await refusal(join(root, 'missing'))).toBe('SOURCE_NOT_FOUND');
      expect(await refusal(join(dir, 'target.bin'))).toBe('SOURCE_NOT_FOUND');
      // Through a link out of the roots, whether the target exists is never told.
      symlinkSync(join(outside, 'no-such-dir'), join(root, 'door-to-nothing'));
      expect(await refusal(join(root, 'door-to-nothing'))).toBe('PATH_OUTSIDE_ROOTS');
      expect(await refusal(join(root, 'door', 'no-such-dir'))).toBe('PATH_OUTSIDE_ROOTS');
    });

    it('lists through a link to a folder inside the roots, and a root itself', async () => {
      symlinkSync(join(dir, 'real-folder'), join(root, 'alias'));
      const aliased = await new DirectoryLister({ roots, path: join(root, 'alias') }).page(
        null,
        10,
      );
      expect(aliased.items).toEqual([
        {
          name: 'inner',
          source: { type: 'file', path: join(dir, 'real-folder', 'inner') },
          size: 5,
        },
      ]);
      const whole = await new DirectoryLister({ roots: new FileRoots([dir]), path: dir }).page(
        null,
        100,
      );
      expect(whole.items.map((item) => item.name)).toEqual([
        'link-inside',
        'real-folder/inner',
        'target.bin',
      ]);
    });
  });
});
