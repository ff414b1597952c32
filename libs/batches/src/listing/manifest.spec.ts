import { execFileSync } from 'node:child_process';
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { FileRoots, FileSource, type SourceError } from '@hashq/sources';

import { openSourceAt } from './line-lister';
import { readLines } from './lines';
import {
  ManifestInvalidError,
  ManifestLister,
  NO_SOURCE,
  parseCsvRecord,
  parseInlineManifest,
  parseManifest,
} from './manifest';
import type { ListedItem, Lister } from './types';

const KEYS = [
  'plain.txt',
  'with space/and+plus.bin',
  'comma,and"quote',
  'new\nline\r\nand cr',
  'percent%41 literal',
  'été/日本語/😀',
  'back\\slash',
  `${'k'.repeat(200)}/${'x'.repeat(823)}`, // 1,024 bytes
];

/** The oracle writes the manifest: Python's csv module, keys encoded by urllib. */
function pythonManifest(path: string, quoting: 'minimal' | 'all'): void {
  const script = `
import csv, json, sys, urllib.parse
keys = json.loads(sys.argv[2])
with open(sys.argv[1], 'w', newline='') as f:
    if sys.argv[3] == 'minimal':
        w = csv.writer(f, quoting=csv.QUOTE_MINIMAL, lineterminator='\\n')
        enc = lambda k: urllib.parse.quote_plus(k, safe='/')
    else:
        # RFC 4180 quoting for real: commas, quotes and newlines left raw in quoted fields.
        w = csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator='\\r\\n')
        enc = lambda k: urllib.parse.quote(k, safe='/,"\\n\\r')
    for i, k in enumerate(keys):
        w.writerow(['bucket-a', enc(k)] + (['v%d,"x"' % i] if i % 2 else []))
`;
  execFileSync('python3', ['-c', script, path, JSON.stringify(KEYS), quoting]);
}

function expectedCsvItems(): ListedItem[] {
  return KEYS.map((key, i) => ({
    name: key,
    source:
      i % 2
        ? { type: 's3', bucket: 'bucket-a', key, versionId: `v${i},"x"` }
        : { type: 's3', bucket: 'bucket-a', key },
    line: 0,
  }));
}

async function listAll(lister: Lister, size: number, from: string | null = null) {
  const items: ListedItem[] = [];
  const cursors: string[] = [];
  let cursor = from;
  do {
    const page = await lister.page(cursor, size);
    items.push(...page.items);
    cursor = page.cursor;
    if (cursor !== null) cursors.push(cursor);
  } while (cursor !== null);
  return { items, cursors };
}

const withoutLines = (items: ListedItem[]) => items.map(({ line: _line, ...item }) => item);

describe('manifests', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'hashq-manifest-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(['minimal', 'all'] as const)(
    'reads S3 Batch Operations CSV written by Python (%s quoting), keys decoded',
    async (quoting) => {
      const path = join(dir, `${quoting}.csv`);
      pythonManifest(path, quoting);
      const items = await parseInlineManifest(execFileSync('cat', [path]), 'csv');
      expect(withoutLines(items)).toEqual(withoutLines(expectedCsvItems()));
      const lines = items.map((item) => item.line);
      expect(lines[0]).toBe(1);
      // QUOTE_ALL leaves the key's newlines raw: that record spans three lines.
      expect(lines[4]).toBe(quoting === 'all' ? 7 : 5);
      expect(await parseInlineManifest(execFileSync('cat', [path]), 'auto')).toEqual(items);
    },
  );

  it('resumes a referenced manifest from every cursor (opened at the byte offset)', async () => {
    const path = join(dir, 'resume.csv');
    pythonManifest(path, 'all');
    const lister = () =>
      new ManifestLister(async (start) => createReadStream(path, { start }), 'csv');
    const full = await listAll(lister(), 1000);
    expect(withoutLines(full.items)).toEqual(withoutLines(expectedCsvItems()));
    const paged = await listAll(lister(), 1);
    expect(paged.items).toEqual(full.items);
    for (const [i, cursor] of paged.cursors.entries()) {
      const rest = await listAll(lister(), 3, cursor);
      expect(rest.items).toEqual(full.items.slice(i + 1));
    }
  });

  it('a resumed listing reads the version it started on, else SOURCE_CHANGED', async () => {
    const path = join(dir, 'pinned.csv');
    pythonManifest(path, 'minimal');
    const roots = new FileRoots([dir]);
    const lister = () => new ManifestLister(openSourceAt(new FileSource(path, roots)), 'csv');
    const first = await lister().page(null, 3);
    expect(first.cursor).toMatch(/^4:\d+:[A-Za-z0-9_-]+$/); // the file's version rides along
    const rest = await listAll(lister(), 100, first.cursor);
    expect(withoutLines([...first.items, ...rest.items])).toEqual(withoutLines(expectedCsvItems()));
    await new Promise((resolve) => setTimeout(resolve, 20)); // a new mtime
    writeFileSync(path, 'bucket-a,changed\n'.repeat(20));
    const changed = await lister()
      .page(first.cursor, 10)
      .catch((err: SourceError) => err.code);
    expect(changed).toBe('SOURCE_CHANGED');
  });

  it('one URL, absolute path or s3:// URI per line; blank lines and comments skipped', async () => {
    const content = [
      '# a comment',
      'https://example.com/a%20b?x=1',
      '',
      '/data/files/with space.bin\r',
      '   ',
      's3://bucket-b/key with space/é',
      'HTTP://EXAMPLE.ORG/upper',
    ].join('\n');
    const items = await parseInlineManifest(content, 'auto');
    expect(items).toEqual([
      {
        name: 'https://example.com/a%20b?x=1',
        source: { type: 'http', url: 'https://example.com/a%20b?x=1' },
        line: 2,
      },
      {
        name: '/data/files/with space.bin',
        source: { type: 'file', path: '/data/files/with space.bin' },
        line: 4,
      },
      {
        name: 's3://bucket-b/key with space/é',
        source: { type: 's3', bucket: 'bucket-b', key: 'key with space/é' },
        line: 6,
      },
      {
        name: 'HTTP://EXAMPLE.ORG/upper',
        source: { type: 'http', url: 'HTTP://EXAMPLE.ORG/upper' },
        line: 7,
      },
    ]);
  });

  it('inline: every bad line with its number, before anything runs', async () => {
    const content = [
      'https://ok.example/x',
      'relative/path',
      'ftp://nope/x',
      '/etc/../secret',
      's3://bucket-only',
      'https://user:pw@host/x',
      'http://[bad',
    ].join('\n');
    const err = await parseInlineManifest(content, 'lines').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ManifestInvalidError);
    const lines = (err as ManifestInvalidError).errors.map((e) => e.line);
    expect(lines).toEqual([2, 3, 4, 5, 6, 7]);
    expect((err as ManifestInvalidError).message).toMatch(/^manifest line 2: line 2: not an http/);
  });

  it('by reference: bad lines become failed items, the others go on', async () => {
    const content = Buffer.concat([
      Buffer.from('bucket-a,good\nbucket-a\nbad bucket!,k\nbucket-a,%ZZ\nbucket-a,"open\n'),
      Buffer.from([0x62, 0x2c, 0xff, 0x0a]), // not UTF-8
      Buffer.from('bucket-a,a,b,c\nbucket-a,""\nbucket-a,"x"y\nbucket-a,last\n'),
    ]);
    const items: ListedItem[] = [];
    for await (const { next: _next, ...item } of parseManifest([content], 'csv')) items.push(item);
    expect(items.map((item) => [item.line, item.error?.code ?? item.source])).toEqual([
      [1, { type: 's3', bucket: 'bucket-a', key: 'good' }],
      [2, 'MANIFEST_LINE_INVALID'],
      [3, 'MANIFEST_LINE_INVALID'],
      [4, 'MANIFEST_LINE_INVALID'],
      [5, 'MANIFEST_LINE_INVALID'], // a quote never closed: that line alone
      [6, 'MANIFEST_LINE_INVALID'], // not UTF-8
      [7, 'MANIFEST_LINE_INVALID'],
      [8, 'MANIFEST_LINE_INVALID'],
      [9, 'MANIFEST_LINE_INVALID'],
      [10, { type: 's3', bucket: 'bucket-a', key: 'last' }],
    ]);
    for (const item of items.filter((item) => item.error)) {
      expect(item.source).toBe(NO_SOURCE);
      expect(item.error!.message).toMatch(new RegExp(`^line ${item.line}: `));
    }
  });

  it('parses RFC 4180 records', () => {
    expect(parseCsvRecord('a,"b,c","d""e",,"f\ng"')).toEqual(['a', 'b,c', 'd"e', '', 'f\ng']);
    expect(parseCsvRecord('')).toEqual(['']);
    expect(parseCsvRecord('"a"x')).toBe('unexpected character after a quoted field');
    expect(parseCsvRecord('a"b')).toBe('quote inside an unquoted field');
    expect(parseCsvRecord('"a')).toBe('unterminated quoted field');
  });

  it('reads lines across chunk borders with their numbers and byte offsets', async () => {
    const text = 'ab\né\n\nlast';
    const chunks = [...Buffer.from(text)].map((byte) => Buffer.from([byte]));
    const lines = [];
    for await (const line of readLines(chunks, { line: 1, offset: 0 }, 3))
      lines.push([line.bytes.toString(), line.start, line.next, line.tooLong ?? false]);
    expect(lines).toEqual([
      ['ab', { line: 1, offset: 0 }, { line: 2, offset: 3 }, false],
      ['é', { line: 2, offset: 3 }, { line: 3, offset: 6 }, false],
      ['', { line: 3, offset: 6 }, { line: 4, offset: 7 }, false],
      ['las', { line: 4, offset: 7 }, { line: 5, offset: 11 }, true],
    ]);
  });
});
