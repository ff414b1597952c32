import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { HARD_NAMES } from '../../../../test/helpers/hard-names';
import { ManifestInvalidError, NO_SOURCE } from '../listing/manifest';
import type { ListedItem, Lister } from '../listing/types';
import { escapeName, unescapeName } from './coreutils-names';
import { parseInlineSums, parseSums, sourceOf, SumLineParser, SumsLister } from './sum-parser';

const sha = (algorithm: string, data: string) => createHash(algorithm).update(data).digest('hex');

describe('SUM files as coreutils writes them', () => {
  let dir: string;
  const content = (name: string) => `content of ${name}`;
  const run = (tool: string, ...args: string[]) =>
    execFileSync(tool, [...args, '--', ...HARD_NAMES], { cwd: dir });

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'hashq-sums-'));
    mkdirSync(join(dir, 'sub dir', 'deeper'), { recursive: true });
    for (const name of HARD_NAMES) writeFileSync(join(dir, name), content(name));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const base = () => ({ type: 'directory' as const, path: dir });
  const expectItems = (items: ListedItem[], algorithm: string, nodeName = algorithm) =>
    expect(items.map(({ line: _line, ...item }) => item)).toEqual(
      HARD_NAMES.map((name) => ({
        name,
        source: { type: 'file', path: join(dir, name) },
        expected: { [algorithm]: sha(nodeName, content(name)) },
      })),
    );

  it('reads sha256sum output, escaped names included', async () => {
    const out = run('sha256sum');
    expect(out.toString()).toContain('\\'); // coreutils did escape some names
    expectItems(await parseInlineSums(out, { base: base(), algorithms: ['sha256'] }), 'sha256');
  });

  it('reads the binary marker (-b) and the BSD tags (--tag)', async () => {
    const options = { base: base(), algorithms: ['sha256'] };
    expectItems(await parseInlineSums(run('sha256sum', '-b'), options), 'sha256');
    expectItems(await parseInlineSums(run('sha256sum', '--tag'), options), 'sha256');
  });

  it('tells algorithms apart by their tag, or by digest length when untagged', async () => {
    const algorithms = ['sha256', 'md5', 'sha512', 'sha1'];
    const options = { base: base(), algorithms };
    expectItems(await parseInlineSums(run('md5sum', '--tag'), options), 'md5');
    expectItems(await parseInlineSums(run('sha512sum'), options), 'sha512');
    expectItems(await parseInlineSums(run('sha1sum', '--tag'), options), 'sha1');
    // A tag names its algorithm even when the batch lists another one.
    expectItems(await parseInlineSums(run('sha224sum', '--tag'), options), 'sha224');
  });

  it('reads a CRLF file, leading blanks, comments, blank lines and a BOM', async () => {
    const h = sha('sha256', 'x');
    const text = `\ufeff# made on Windows\r\n\r\n  ${h}  a\r\n\t${h} *b c\r\n\r\n`;
    const items = await parseInlineSums(text, { base: base(), algorithms: ['sha256'] });
    expect(items.map((item) => [item.line, item.name])).toEqual([
      [3, 'a'],
      [4, 'b c'],
    ]);
  });

  it("reads BSD's reversed lines as coreutils does", () => {
    const h = sha('sha256', 'x');
    const parser = new SumLineParser({ algorithms: ['sha256'] });
    expect(parser.parse(`${h} name one`)).toEqual({
      name: 'name one',
      algorithm: 'sha256',
      hex: h,
    });
    expect(parser.parse(`${h}  two`)).toEqual({ name: ' two', algorithm: 'sha256', hex: h });
    expect(parser.parse(`${h} x`)).toEqual({ name: 'x', algorithm: 'sha256', hex: h });
    const gnu = new SumLineParser({ algorithms: ['sha256'] });
    expect(gnu.parse(`${h}  one`)).toEqual({ name: 'one', algorithm: 'sha256', hex: h });
    expect(gnu.parse(`${h} two`)).toMatch(/after/);
  });

  it('refuses bad lines with their number and reason (inline), fails them alone (by reference)', async () => {
    const h = sha('sha256', 'x');
    const lines = [
      `${h}  good`, // 1
      `${h.slice(2)}  short`, // 2
      `\\${h}  bad\\tescape`, // 3
      `SHA256 (no close = ${h}`, // 4
      `SHA256 (x) = ${h}00`, // 5
      `SHA256 (x) ${h}`, // 6
      `NOSUCH (x) = ${h}`, // 7: not a tag hashq knows: read as an untagged line, and not one
      `${h}  /abs/name`, // 8
      `${h}  ../up`, // 9
      `zz${h}  nothex`, // 10
      `SHA256 (b64) = ${Buffer.from(h, 'hex').toString('base64')}`, // 11: coreutils 9.2 base64
      `${h}  `, // 12: empty name
    ];
    const options = { base: base(), algorithms: ['sha256'] };
    const err = await parseInlineSums(lines.join('\n'), options).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ManifestInvalidError);
    expect((err as ManifestInvalidError).errors.map((e) => e.line)).toEqual([
      2, 3, 4, 5, 6, 7, 8, 9, 10, 12,
    ]);
    const items: ListedItem[] = [];
    for await (const { next: _next, ...item } of parseSums([lines.join('\n')], options))
      items.push(item);
    expect(items.filter((item) => !item.error).map((item) => [item.line, item.name])).toEqual([
      [1, 'good'],
      [11, 'b64'],
    ]);
    expect(items[10].expected).toEqual({ sha256: h });
    for (const item of items.filter((item) => item.error)) expect(item.source).toBe(NO_SOURCE);
  });

  it('an untagged digest that fits two algorithms is refused: use tags', async () => {
    const h = sha('sha256', 'x');
    const parser = new SumLineParser({ algorithms: ['sha256', 'sha3-256'] });
    expect(parser.parse(`${h}  a`)).toMatch(/several algorithms/);
    expect(parser.parse(`SHA3-256 (a) = ${h}`)).toEqual({
      name: 'a',
      algorithm: 'sha3-256',
      hex: h,
    });
  });

  it('XOF digests are as long as the batch asks', () => {
    const parser = new SumLineParser({ algorithms: ['shake256'], outputLength: 64 });
    const h = 'ab'.repeat(64);
    expect(parser.parse(`SHAKE256 (a) = ${h}`)).toEqual({
      name: 'a',
      algorithm: 'shake256',
      hex: h,
    });
    expect(parser.parse(`${h}  b`)).toEqual({ name: 'b', algorithm: 'shake256', hex: h });
    expect(parser.parse(`SHAKE256 (a) = ${h.slice(2)}`)).toMatch(/128 hex digits/);
  });

  it('maps names under an S3 prefix or a URL prefix', () => {
    const s3 = { type: 's3' as const, bucket: 'b', prefix: 'p/q/' };
    expect(sourceOf('a b/c', s3)).toEqual({ type: 's3', bucket: 'b', key: 'p/q/a b/c' });
    expect(sourceOf('x'.repeat(1021), s3)).toMatch(/1024/);
    const http = { type: 'http' as const, prefix: 'https://h.example/data/' };
    expect(sourceOf('a b/é#?.txt', http)).toEqual({
      type: 'http',
      url: 'https://h.example/data/a%20b/%C3%A9%23%3F.txt',
    });
  });

  it('resumes a referenced SUM file from every cursor', async () => {
    const path = join(dir, 'SHA256SUMS');
    writeFileSync(path, run('sha256sum'));
    const lister = () =>
      new SumsLister(async (start) => createReadStream(path, { start }), {
        base: base(),
        algorithms: ['sha256'],
      });
    const listAll = async (l: Lister, size: number, from: string | null) => {
      const items: ListedItem[] = [];
      const cursors: string[] = [];
      let cursor = from;
      do {
        const page = await l.page(cursor, size);
        items.push(...page.items);
        cursor = page.cursor;
        if (cursor) cursors.push(cursor);
      } while (cursor !== null);
      return { items, cursors };
    };
    const full = await listAll(lister(), 2, null);
    expectItems(full.items, 'sha256');
    for (const [i, cursor] of full.cursors.entries()) {
      expect((await listAll(lister(), 5, cursor)).items).toEqual(full.items.slice(2 * (i + 1)));
    }
  });

  it('escapes and unescapes names as coreutils', () => {
    for (const name of HARD_NAMES) expect(unescapeName(escapeName(name))).toBe(name);
    expect(escapeName('a\\b\nc\rd')).toBe('a\\\\b\\nc\\rd');
    expect(unescapeName('ends with \\')).toBeNull();
    expect(unescapeName('\\t')).toBeNull();
  });
});
