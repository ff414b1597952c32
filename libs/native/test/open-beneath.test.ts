/**
 * openBeneath: one regular file opened beneath a root, against Node's fs on the same tree (realpath,
 * stat, the bytes read through the descriptor). Random paths through links check every answer
 * against the oracle.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import * as lib from '../lib';
import { prng, TEST_SEED } from './helpers/oracle';

const rnd = prng(TEST_SEED ^ 0x0be2);

let dir: string;
let root: string;
let outside: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hashq-open-'));
  root = path.join(dir, 'root');
  outside = path.join(dir, 'outside.txt');
  fs.mkdirSync(path.join(root, 'sub', 'deeper'), { recursive: true });
  fs.writeFileSync(outside, 'secret');
  const files: Record<string, Buffer> = {
    'a.txt': Buffer.from('hello'),
    empty: Buffer.alloc(0),
    'sub/b.bin': rnd.bytes(4096),
    'sub/deeper/c.bin': rnd.bytes(70_000),
    'name with spaces\nand newline': Buffer.from('odd'),
    'héllo ✓': Buffer.from('unicode'),
  };
  for (const [name, bytes] of Object.entries(files)) fs.writeFileSync(path.join(root, name), bytes);
  fs.symlinkSync('sub/b.bin', path.join(root, 'link-inside'));
  fs.symlinkSync('../b.bin', path.join(root, 'sub', 'deeper', 'link-up'));
  fs.symlinkSync('sub', path.join(root, 'link-dir'));
  fs.symlinkSync('../outside.txt', path.join(root, 'link-out'));
  fs.symlinkSync(outside, path.join(root, 'link-abs'));
  fs.symlinkSync(path.join(root, 'a.txt'), path.join(root, 'link-abs-inside'));
  fs.symlinkSync('loop', path.join(root, 'loop'));
  fs.symlinkSync('missing', path.join(root, 'link-dangling'));
  execFileSync('mkfifo', [path.join(root, 'fifo')]);
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Open descriptors of this process. */
const openFds = (): number => fs.readdirSync('/proc/self/fd').length;

/** What Node's fs says of root/rel: the real path and its stat, or the errno code. */
function oracle(rel: string): { real: string; stats: fs.BigIntStats } | { code: string } {
  try {
    const real = fs.realpathSync.native(`${root}/${rel}`);
    return { real, stats: fs.statSync(real, { bigint: true }) };
  } catch (err) {
    return { code: (err as NodeJS.ErrnoException).code! };
  }
}

function expectStats(r: lib.OpenBeneathResult, stats: fs.BigIntStats): void {
  expect([r.size, r.mtimeNs, r.dev, r.ino, r.mode]).toEqual([
    stats.size,
    stats.mtimeNs,
    stats.dev,
    stats.ino,
    stats.mode,
  ]);
}

describe('openBeneath', () => {
  test.each([
    'a.txt',
    'empty',
    'sub/b.bin',
    './sub//deeper/c.bin',
    'name with spaces\nand newline',
    'héllo ✓',
    'link-inside',
    'sub/deeper/link-up',
    'link-dir/deeper/../b.bin',
  ])('%j: the real path, fstat and bytes equal Node fs', async (rel) => {
    const want = oracle(rel);
    if (!('real' in want)) throw new Error(`fixture ${rel}: ${want.code}`);
    const r = await lib.openBeneath(root, rel);
    try {
      expect(r).toMatchObject({ status: 'OK', errno: null, path: want.real });
      expect(r.fd).toBeGreaterThanOrEqual(0);
      expectStats(r, want.stats);
      expect(fs.fstatSync(r.fd, { bigint: true }).ino).toBe(want.stats.ino);
      expect(fs.readFileSync(r.fd)).toEqual(fs.readFileSync(want.real));
      expect(() => fs.writeSync(r.fd, 'x')).toThrow(expect.objectContaining({ code: 'EBADF' }));
    } finally {
      if (r.fd >= 0) fs.closeSync(r.fd);
    }
  });

  test('keepOpen: false gives the same name and fstat, and no descriptor', async () => {
    const before = openFds();
    const r = await lib.openBeneath(root, 'link-inside', { keepOpen: false });
    const want = oracle('link-inside') as { real: string; stats: fs.BigIntStats };
    expect(r).toMatchObject({ status: 'OK', fd: -1, path: want.real });
    expectStats(r, want.stats);
    expect(openFds()).toBe(before);
  });

  test.each([
    ['missing', 'NOT_FOUND', 'ENOENT'],
    ['link-dangling', 'NOT_FOUND', 'ENOENT'],
    ['a.txt/x', 'NOT_FOUND', 'ENOTDIR'],
    ['x'.repeat(300), 'NOT_FOUND', 'ENAMETOOLONG'],
    ['../outside.txt', 'OUTSIDE', 'EXDEV'],
    ['sub/../../root/a.txt', 'OUTSIDE', 'EXDEV'],
    ['link-out', 'OUTSIDE', 'EXDEV'],
    ['link-abs', 'OUTSIDE', 'EXDEV'],
    ['link-abs-inside', 'OUTSIDE', 'EXDEV'], // absolute: the caller's own walk decides
    ['/etc/passwd', 'OUTSIDE', 'EXDEV'],
    ['loop', 'OUTSIDE', 'ELOOP'],
    ['sub', 'NOT_REGULAR', null],
    ['link-dir', 'NOT_REGULAR', null],
    ['fifo', 'NOT_REGULAR', null], // named with O_PATH, never opened: no writer needed
    ['', 'NOT_REGULAR', null],
    ['.', 'NOT_REGULAR', null],
  ])('%j: %s (%s), no descriptor', async (rel, status, errno) => {
    const before = openFds();
    const r = await lib.openBeneath(root, rel);
    expect(r).toMatchObject({ status, errno, fd: -1, path: '' });
    if (status === 'NOT_REGULAR') {
      const stats = fs.statSync(`${root}/${rel}`, { bigint: true });
      expectStats(r, stats);
      expect(stats.isFile()).toBe(false);
    }
    expect(openFds()).toBe(before);
  });

  test('a missing root, or a root that is a file: NOT_FOUND', async () => {
    await expect(lib.openBeneath(path.join(dir, 'nope'), 'a.txt')).resolves.toMatchObject({
      status: 'NOT_FOUND',
      errno: 'ENOENT',
    });
    await expect(lib.openBeneath(outside, 'a.txt')).resolves.toMatchObject({
      status: 'NOT_FOUND',
      errno: 'ENOTDIR',
    });
  });

  test('a root reached through a symbolic link is followed (the operator’s path)', async () => {
    const alias = path.join(dir, 'alias');
    fs.symlinkSync(root, alias);
    const r = await lib.openBeneath(alias, 'a.txt', { keepOpen: false });
    expect(r).toMatchObject({ status: 'OK', path: fs.realpathSync.native(`${root}/a.txt`) });
  });

  test('an unreadable file is FORBIDDEN (as root: checked in a child run as nobody)', async () => {
    const name = 'locked';
    fs.writeFileSync(path.join(root, name), 'x');
    fs.chmodSync(path.join(root, name), 0o000);
    try {
      if (process.getuid?.() !== 0) {
        await expect(lib.openBeneath(root, name)).resolves.toMatchObject({
          status: 'FORBIDDEN',
          errno: 'EACCES',
          fd: -1,
        });
        return;
      }
      fs.chmodSync(dir, 0o755); // mkdtemp made it 0700
      const script = `
        process.setgid(65534); process.setuid(65534);
        const lib = require(${JSON.stringify(path.join(__dirname, '..', 'dist', 'index.js'))});
        Promise.all([lib.openBeneath(${JSON.stringify(root)}, ${JSON.stringify(name)}),
                     lib.openBeneath(${JSON.stringify(root)}, 'a.txt', { keepOpen: false })])
          .then((rs) => console.log(JSON.stringify(rs.map((r) => [r.status, r.errno, r.fd]))));`;
      const out = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' });
      expect(JSON.parse(out)).toEqual([
        ['FORBIDDEN', 'EACCES', -1],
        ['OK', null, -1],
      ]);
    } finally {
      fs.rmSync(path.join(root, name));
    }
  });

  test('random paths through links: every answer agrees with Node fs (seed printed on failure)', async () => {
    const parts = [
      'a.txt',
      'sub',
      'deeper',
      'b.bin',
      'c.bin',
      '..',
      '.',
      'link-inside',
      'link-dir',
    ];
    parts.push('link-up', 'link-out', 'link-abs', 'loop', 'fifo', 'missing', '');
    const before = openFds();
    for (let round = 0; round < 400; round++) {
      const names = Array.from({ length: 1 + rnd.int(4) }, () => parts[rnd.int(parts.length)]);
      const rel = names.join('/');
      const ctx = `seed ${TEST_SEED} round ${round} ${JSON.stringify(rel)}`;
      const r = await lib.openBeneath(root, rel, { keepOpen: false });
      const want = oracle(rel);
      const escapes =
        rel.startsWith('/') || // '' first: an absolute path
        names.some((n) => ['..', 'link-up', 'link-out', 'link-abs'].includes(n));
      if (r.status === 'OK') {
        expect([ctx, r.path]).toEqual([ctx, 'real' in want && want.real]);
        expect([ctx, r.path.startsWith(`${root}/`)]).toEqual([ctx, true]);
        expectStats(r, (want as { stats: fs.BigIntStats }).stats);
      } else if (r.status === 'NOT_REGULAR') {
        expect([ctx, 'real' in want && !want.stats.isFile()]).toEqual([ctx, true]);
      } else if (r.status === 'NOT_FOUND') {
        expect([ctx, 'code' in want && want.code]).toEqual([ctx, r.errno]);
      } else {
        // OUTSIDE: only a `..`, a link that climbs or an absolute one, or the loop lead there
        expect([ctx, r.status, escapes || names.includes('loop')]).toEqual([ctx, 'OUTSIDE', true]);
      }
      // Node agrees that a path that opens, or is refused as missing, without climbing, is so.
      if (!escapes && 'real' in want && want.stats.isFile())
        expect([ctx, r.status]).toEqual([ctx, 'OK']);
    }
    expect(openFds()).toBe(before);
  });

  test('odd strings never crash: lone surrogates, control bytes, long paths', async () => {
    const odd = ['\ud800', 'a\udfff/b', '\u0001\u007f', 'x/'.repeat(5000), 'é'.repeat(3000)];
    for (let i = 0; i < 20; i++) odd.push(rnd.bytes(1 + rnd.int(64)).toString('latin1'));
    for (const rel of odd) {
      const r = await lib.openBeneath(root, rel.replace(/\0/g, ''), { keepOpen: false });
      expect(['NOT_FOUND', 'OUTSIDE', 'NOT_REGULAR']).toContain(r.status);
    }
    const r = await lib.openBeneath('x'.repeat(100_000), 'a.txt');
    expect(r).toMatchObject({ status: 'NOT_FOUND', errno: 'ENAMETOOLONG' });
  });

  test('bad arguments reject with ERR_BAD_ARGUMENT', async () => {
    const bad: (() => Promise<unknown>)[] = [
      () => lib.openBeneath(root, 'a\0b'),
      () => lib.openBeneath(`${root}\0`, 'a.txt'),
      () => lib.openBeneath('', 'a.txt'),
      () => lib.openBeneath(42 as unknown as string, 'a.txt'),
      () => lib.openBeneath(root, null as unknown as string),
      () => lib.openBeneath(root, 'a.txt', { keepOpen: 'yes' as unknown as boolean }),
    ];
    for (const call of bad)
      await expect(call()).rejects.toMatchObject({ code: 'ERR_BAD_ARGUMENT' });
  });
});
