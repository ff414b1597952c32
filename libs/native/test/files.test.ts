/**
 * File input: updateFromFile (ranges of an open descriptor into hashers) and
 * hashFiles (many files beneath a directory descriptor), against Node's
 * crypto on the same bytes.
 */
import { execFileSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import * as lib from '../lib';
import { oracle, prng, TEST_SEED } from './helpers/oracle';

const rnd = prng(TEST_SEED ^ 0x5eed);
const has = (name: string): boolean => lib.findAlgorithm(name) !== undefined;

let dir: string;
let data: Buffer;
let file: string;
let fd: number;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hashq-files-'));
  data = rnd.bytes(3 * 1024 * 1024 + 12345);
  file = path.join(dir, 'big.bin');
  fs.writeFileSync(file, data);
  fd = fs.openSync(file, 'r');
});

afterAll(() => {
  fs.closeSync(fd);
  fs.rmSync(dir, { recursive: true, force: true });
});

const sha256 = (b: Uint8Array): string => crypto.createHash('sha256').update(b).digest('hex');

describe('updateFromFile', () => {
  test('random ranges and splits equal crypto of the same bytes (seed printed on failure)', async () => {
    for (let round = 0; round < 12; round++) {
      const start = rnd.int(data.length);
      const end = start + rnd.int(data.length - start + 1);
      const bufferSize = [4096, 65536, 256 * 1024, 1 << 20][rnd.int(4)];
      const a = lib.createHasher('sha256');
      const b = lib.createHasher('sha512');
      // the range in up to four pieces, with a serialize/restore between pieces
      let at = start;
      let hashers = [a, b];
      for (let piece = 0; at < end; piece++) {
        const len = piece === 3 ? end - at : rnd.int(end - at + 1);
        const got = await lib.updateFromFile(hashers, fd, at, len, { bufferSize });
        expect(got).toBe(len);
        at += len;
        hashers = hashers.map((h) => lib.Hasher.restore(h.serialize()));
      }
      const ctx = `seed ${TEST_SEED} round ${round} [${start}, ${end}) buffer ${bufferSize}`;
      const msg = data.subarray(start, end);
      expect([ctx, hashers[0].digest().toString('hex')]).toEqual([ctx, sha256(msg)]);
      expect([ctx, hashers[1].digest().toString('hex')]).toEqual([
        ctx,
        crypto.createHash('sha512').update(msg).digest('hex'),
      ]);
      expect(hashers[0].bytesHashed).toBe(end - start);
    }
  });

  test.each(['sha1', 'md5', 'sha3-256', 'shake256', 'crc32'].filter(has))(
    '%s: the whole file equals the oracle',
    async (name) => {
      const len = lib.findAlgorithm(name)!.xof ? 48 : undefined;
      const h = lib.createHasher(name, { outputLength: len });
      expect(await lib.updateFromFile(h, fd, 0, data.length)).toBe(data.length);
      expect(h.digest().toString('hex')).toBe(oracle(name, data, len)!.toString('hex'));
    },
  );

  test('a range past the end: the bytes up to the end are absorbed and counted', async () => {
    const h = lib.createHasher('sha256');
    expect(await lib.updateFromFile(h, fd, data.length - 100, 1000)).toBe(100);
    expect(await lib.updateFromFile(h, fd, data.length + 5, 1000)).toBe(0);
    expect(h.digest().toString('hex')).toBe(sha256(data.subarray(data.length - 100)));
  });

  test('length 0 resolves 0 without touching the hasher', async () => {
    const h = lib.createHasher('sha256');
    expect(await lib.updateFromFile(h, fd, 0, 0)).toBe(0);
    expect(h.bytesHashed).toBe(0);
  });

  test('busy while it runs, idle after', async () => {
    const h = lib.createHasher('sha256');
    const running = lib.updateFromFile(h, fd, 0, data.length);
    expect(h.busy).toBe(true);
    expect(() => h.update('x')).toThrow(lib.BusyError);
    await expect(lib.updateFromFile(h, fd, 0, 10)).rejects.toMatchObject({ code: 'ERR_BUSY' });
    await expect(h.updateAsync(Buffer.alloc(1 << 20))).rejects.toMatchObject({ code: 'ERR_BUSY' });
    await running;
    expect(h.busy).toBe(false);
    expect(h.digest().toString('hex')).toBe(sha256(data));
  });

  test('a descriptor closed during the read: the addon reads its own duplicate', async () => {
    const own = fs.openSync(file, 'r');
    const h = lib.createHasher('sha256');
    const running = lib.updateFromFile(h, own, 0, data.length, { bufferSize: 4096 });
    fs.closeSync(own);
    expect(await running).toBe(data.length);
    expect(h.digest().toString('hex')).toBe(sha256(data));
  });

  test('a bad descriptor rejects with an errno code and leaves the hasher usable', async () => {
    const h = lib.createHasher('sha256');
    const err = await lib.updateFromFile(h, 987654, 0, 10).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(lib.FileReadError);
    expect(err).toMatchObject({ code: 'EBADF' });
    expect(h.busy).toBe(false);
    h.update('abc');
    expect(h.digest().toString('hex')).toBe(sha256(Buffer.from('abc')));
  });

  test('a directory descriptor: pread fails EISDIR, as a FileReadError', async () => {
    const d = fs.openSync(dir, 'r');
    try {
      const err = await lib.updateFromFile(lib.createHasher('sha256'), d, 0, 10).catch((e) => e);
      expect(err).toMatchObject({ code: 'EISDIR', syscall: 'pread' });
    } finally {
      fs.closeSync(d);
    }
  });

  test('bad arguments reject with ERR_BAD_ARGUMENT', async () => {
    const h = lib.createHasher('sha256');
    for (const call of [
      () => lib.updateFromFile([], fd, 0, 1),
      () => lib.updateFromFile([h, h], fd, 0, 1),
      () => lib.updateFromFile(h, -1, 0, 1),
      () => lib.updateFromFile(h, fd, 1.5, 1),
      () => lib.updateFromFile(h, fd, 0, 1, { bufferSize: 10 }),
    ]) {
      await expect(call()).rejects.toMatchObject({ code: 'ERR_BAD_ARGUMENT' });
      expect(h.busy).toBe(false);
    }
  });

  test('a file shrunk during the read: the process lives, the hashers hold exactly the bytes counted', async () => {
    // Six sha3-512 hashers slow the read to tens of MB/s, so the file is (almost always) cut
    // while the pool thread reads it from a mapping: the page past the new end raises SIGBUS,
    // from which the addon recovers (README, "Mapped reads"). Whenever the cut lands, the count
    // lies between the new size and the range, and the digests are those of that many bytes.
    const big = path.join(dir, 'shrinking.bin');
    const content = crypto.randomBytes(48 << 20);
    fs.writeFileSync(big, content);
    const cut = (3 << 20) + 77;
    for (const offset of [0, 5000]) {
      fs.writeFileSync(big, content);
      const own = fs.openSync(big, 'r+');
      try {
        const hashers = Array.from({ length: 6 }, () => lib.createHasher('sha3-512'));
        const running = lib.updateFromFile(hashers, own, offset, content.length - offset);
        await new Promise((resolve) => setTimeout(resolve, 30));
        fs.ftruncateSync(own, cut);
        const got = await running;
        expect(got).toBeGreaterThanOrEqual(cut - offset);
        expect(got).toBeLessThan(content.length - offset);
        const want = oracle('sha3-512', content.subarray(offset, offset + got))!.toString('hex');
        for (const h of hashers)
          expect([offset, h.digest().toString('hex')]).toEqual([offset, want]);
        expect(hashers[0].bytesHashed).toBe(got);
      } finally {
        fs.closeSync(own);
      }
    }
    fs.rmSync(big);
  });
});

describe('hashFiles', () => {
  let tree: string;
  let outside: string;
  let dirFd: number;
  const contents = new Map<string, Buffer>();

  beforeAll(() => {
    tree = path.join(dir, 'tree');
    outside = path.join(dir, 'outside.txt');
    fs.mkdirSync(path.join(tree, 'sub', 'deeper'), { recursive: true });
    fs.writeFileSync(outside, 'secret');
    const files: Record<string, Buffer> = {
      'a.txt': Buffer.from('hello'),
      empty: Buffer.alloc(0),
      'sub/b.bin': rnd.bytes(4096),
      'sub/deeper/c.bin': rnd.bytes(300 * 1024 + 7), // more than one read buffer
      'name with spaces\nand newline': Buffer.from('odd'),
      'héllo ✓': Buffer.from('unicode'),
    };
    for (const [name, bytes] of Object.entries(files)) {
      fs.writeFileSync(path.join(tree, name), bytes);
      contents.set(name, bytes);
    }
    fs.symlinkSync('sub/b.bin', path.join(tree, 'link-inside'));
    fs.symlinkSync('../b.bin', path.join(tree, 'sub', 'deeper', 'link-up'));
    fs.symlinkSync('../outside.txt', path.join(tree, 'link-out'));
    fs.symlinkSync(outside, path.join(tree, 'link-abs'));
    execFileSync('mkfifo', [path.join(tree, 'fifo')]);
    dirFd = fs.openSync(tree, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  });

  afterAll(() => fs.closeSync(dirFd));

  const algorithms = ['sha256', 'sha512', 'sha1', 'md5', 'sha3-256', 'shake128'].filter(has);
  const expectDigests = (r: lib.HashFilesResult, i: number, bytes: Buffer): void => {
    algorithms.forEach((name, a) => {
      const want = oracle(name, bytes, lib.findAlgorithm(name)!.xof ? 40 : undefined)!;
      expect([name, r.digest(i, a).toString('hex')]).toEqual([name, want.toString('hex')]);
    });
  };

  test('regular files (any name, empty, large, through links inside) equal crypto', async () => {
    const names = [...contents.keys(), 'link-inside', 'sub/deeper/link-up'];
    const r = await lib.hashFiles(dirFd, names, algorithms, { outputLength: 40 });
    expect(r.count).toBe(names.length);
    names.forEach((name, i) => {
      const bytes = contents.get(name) ?? contents.get('sub/b.bin')!;
      expect([name, r.error(i)]).toEqual([name, null]);
      expect(r.size(i)).toBe(bytes.length);
      const st = fs.statSync(path.join(tree, name), { bigint: true });
      expect(r.mtimeNs(i)).toBe(st.mtimeNs);
      expect(r.ino(i)).toBe(st.ino);
      expect(r.dev(i)).toBe(st.dev);
      expectDigests(r, i, bytes);
    });
    const items = r.toArray();
    expect(items[0]).toMatchObject({ size: 5 });
    expect('digests' in items[0] && items[0].digests[0].toString('hex')).toBe(
      crypto.createHash('sha256').update('hello').digest('hex'),
    );
  });

  test('bad names get per-file errors, the others their digests', async () => {
    const names = [
      'missing',
      'a.txt',
      'link-out',
      'link-abs',
      '../outside.txt',
      outside, // absolute
      'sub',
      'fifo',
      'a.txt/x',
      'x'.repeat(300),
      'sub/b.bin',
    ];
    const r = await lib.hashFiles(dirFd, names, ['sha256']);
    const codes = names.map((_, i) => r.error(i)?.code ?? 'ok');
    expect(codes).toEqual([
      'SOURCE_NOT_FOUND',
      'ok',
      'PATH_OUTSIDE_ROOTS',
      'PATH_OUTSIDE_ROOTS',
      'PATH_OUTSIDE_ROOTS',
      'PATH_OUTSIDE_ROOTS',
      'NOT_A_REGULAR_FILE',
      'NOT_A_REGULAR_FILE',
      'SOURCE_NOT_FOUND',
      'SOURCE_NOT_FOUND',
      'ok',
    ]);
    expect(r.error(0)).toMatchObject({ errno: 'ENOENT' });
    expect(r.error(2)).toMatchObject({ errno: 'EXDEV' });
    expect(r.error(7)).toMatchObject({ errno: null });
    expect(r.digest(1).toString('hex')).toBe(sha256(contents.get('a.txt')!));
    expect(r.digest(10).toString('hex')).toBe(sha256(contents.get('sub/b.bin')!));
  });

  test('followSymlinks: false refuses every symbolic link', async () => {
    const r = await lib.hashFiles(dirFd, ['link-inside', 'a.txt'], ['sha256'], {
      followSymlinks: false,
    });
    expect(r.error(0)).toMatchObject({ code: 'PATH_OUTSIDE_ROOTS', errno: 'ELOOP' });
    expect(r.error(1)).toBeNull();
  });

  test('an unreadable file is SOURCE_FORBIDDEN (as root: checked in a child run as nobody)', async () => {
    const name = 'locked';
    fs.writeFileSync(path.join(tree, name), 'x');
    fs.chmodSync(path.join(tree, name), 0o000);
    try {
      if (process.getuid?.() !== 0) {
        const r = await lib.hashFiles(dirFd, [name, 'a.txt'], ['sha256']);
        expect([r.error(0), r.error(1)]).toEqual([
          expect.objectContaining({ code: 'SOURCE_FORBIDDEN', errno: 'EACCES' }),
          null,
        ]);
        return;
      }
      fs.chmodSync(dir, 0o755); // mkdtemp made it 0700
      const script = `
        process.setgid(65534); process.setuid(65534);
        const lib = require(${JSON.stringify(path.join(__dirname, '..', 'dist', 'index.js'))});
        const d = require('node:fs').openSync(${JSON.stringify(tree)}, 'r');
        lib.hashFiles(d, [${JSON.stringify(name)}, 'a.txt'], ['sha256'])
          .then((r) => console.log(JSON.stringify([r.error(0), r.error(1)])));`;
      const out = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' });
      expect(JSON.parse(out)).toEqual([
        { code: 'SOURCE_FORBIDDEN', errno: 'EACCES', message: 'permission denied' },
        null,
      ]);
    } finally {
      fs.rmSync(path.join(tree, name));
    }
  });

  test('a long list split across pool tasks gives every file its own digest, in order', async () => {
    const many = path.join(tree, 'many');
    fs.mkdirSync(many);
    const names: string[] = [];
    for (let i = 0; i < 500; i++) {
      names.push(`many/f${i}`);
      fs.writeFileSync(path.join(tree, `many/f${i}`), `file number ${i}`);
    }
    names.push('many/nope');
    for (const parallel of [1, 2, 3]) {
      const r = await lib.hashFiles(dirFd, names, ['sha256', 'md5'], { parallel });
      for (let i = 0; i < 500; i++) {
        expect(r.digest(i, 0).toString('hex')).toBe(sha256(Buffer.from(`file number ${i}`)));
        expect(r.digest(i, 1).toString('hex')).toBe(
          crypto.createHash('md5').update(`file number ${i}`).digest('hex'),
        );
      }
      expect(r.error(500)?.code).toBe('SOURCE_NOT_FOUND');
    }
  });

  test('names as Buffers (not UTF-8) work', async () => {
    const raw = Buffer.from([0x66, 0xff, 0x66]); // "f\xfff"
    const full = Buffer.concat([Buffer.from(`${tree}/`), raw]);
    fs.writeFileSync(full, 'raw name');
    const r = await lib.hashFiles(dirFd, [raw, 'a.txt'], ['sha256']);
    expect(r.digest(0).toString('hex')).toBe(sha256(Buffer.from('raw name')));
    expect(r.digest(1).toString('hex')).toBe(sha256(contents.get('a.txt')!));
  });

  test('an empty list resolves at once; bad arguments reject', async () => {
    expect((await lib.hashFiles(dirFd, [], ['sha256'])).count).toBe(0);
    await expect(lib.hashFiles(dirFd, ['a\0b'], ['sha256'])).rejects.toMatchObject({
      code: 'ERR_BAD_ARGUMENT',
    });
    await expect(lib.hashFiles(dirFd, [''], ['sha256'])).rejects.toMatchObject({
      code: 'ERR_BAD_ARGUMENT',
    });
    await expect(lib.hashFiles(dirFd, ['a.txt'], [])).rejects.toMatchObject({
      code: 'ERR_BAD_ARGUMENT',
    });
    await expect(lib.hashFiles(dirFd, ['a.txt'], ['nope'])).rejects.toMatchObject({
      code: 'ERR_UNKNOWN_ALGORITHM',
    });
    await expect(lib.hashFiles(987654, ['a.txt'], ['sha256'])).rejects.toMatchObject({
      code: 'EBADF',
    });
  });

  test('a descriptor of a file (not a directory): every name fails, nothing throws', async () => {
    const r = await lib.hashFiles(fd, ['a.txt'], ['sha256']);
    expect(r.error(0)?.code).toBe('SOURCE_NOT_FOUND'); // ENOTDIR
  });
});
