import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { HARD_NAMES } from '../../../../test/helpers/hard-names';
import { parseInlineSums } from '../sums/sum-parser';
import type { ReportFormat, ReportOptions, ReportRow } from './types';
import { writeReport } from './writers';

const ALGORITHMS = ['sha256', 'md5', 'sha512'];

function digests(data: string) {
  return Object.fromEntries(
    ALGORITHMS.map((algorithm) => {
      const digest = createHash(algorithm).update(data).digest();
      return [algorithm, { hex: digest.toString('hex'), base64: digest.toString('base64') }];
    }),
  );
}

async function report(
  format: ReportFormat,
  rows: ReportRow[],
  options: Partial<ReportOptions> = {},
) {
  let out = '';
  for await (const piece of writeReport(format, rows, {
    algorithm: 'sha256',
    algorithms: ALGORITHMS,
    ...options,
  }))
    out += piece;
  return out;
}

describe('report writers', () => {
  let dir: string;
  const content = (name: string) => `report content of ${name}`;
  let rows: ReportRow[];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'hashq-report-'));
    mkdirSync(join(dir, 'sub dir', 'deeper'), { recursive: true });
    for (const name of HARD_NAMES) writeFileSync(join(dir, name), content(name));
    rows = HARD_NAMES.map((name) => ({
      name,
      source: { type: 'file', path: join(dir, name) },
      size: Buffer.byteLength(content(name)),
      status: 'succeeded',
      digests: digests(content(name)),
    }));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const check = (tool: string, reportText: string) => {
    writeFileSync(join(dir, 'REPORT'), reportText);
    return spawnSync(tool, ['-c', 'REPORT'], { cwd: dir, encoding: 'utf8' });
  };
  const failedRow: ReportRow = {
    name: 'gone',
    source: { type: 'file', path: '/nowhere/gone' },
    status: 'failed',
    errorCode: 'SOURCE_NOT_FOUND',
    errorMessage: 'file does not exist',
    digests: {},
  };

  it.each([
    ['sha256sum', 'sha256', []],
    ['sha256sum', 'sha256', ['--tag']],
    ['md5sum', 'md5', ['--tag']],
    ['sha512sum', 'sha512', []],
  ] as const)(
    '%s -c passes on the %s report, byte for byte what coreutils writes with options %j',
    async (tool, algorithm, args) => {
      const format = args.length > 0 ? 'bsd' : 'sha256sum';
      const text = await report(format, [...rows, failedRow], { algorithm });
      const result = check(tool, text);
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
      expect(result.stdout.split('\n').filter((line) => line.endsWith(': OK'))).toHaveLength(
        HARD_NAMES.length,
      );
      const coreutils = execFileSync(tool, [...args, '--', ...HARD_NAMES], { cwd: dir });
      expect(text).toBe(coreutils.toString('utf8'));
    },
  );

  it('a planted wrong digest fails sha256sum -c on that very name', async () => {
    const wrong = rows.map((row) =>
      row.name === 'new\nline' ? { ...row, digests: digests('something else') } : row,
    );
    const result = check('sha256sum', await report('sha256sum', wrong));
    expect(result.status).toBe(1);
    expect(result.stdout.split('\n').filter((line) => line.endsWith('FAILED'))).toEqual([
      '\\new\\nline: FAILED',
    ]);
  });

  it('reads back through the SUM parser with the same names', async () => {
    for (const format of ['sha256sum', 'bsd'] as const) {
      const items = await parseInlineSums(await report(format, rows), {
        base: { type: 'directory', path: dir },
        algorithms: ['sha256'],
      });
      expect(items.map((item) => [item.name, item.expected])).toEqual(
        rows.map((row) => [row.name, { sha256: row.digests.sha256.hex }]),
      );
    }
  });

  it('csv: S3 Batch Operations completion report columns, read back by Python csv', async () => {
    const csvRows: ReportRow[] = [
      ...HARD_NAMES.map((name, i): ReportRow => ({
        name,
        source: {
          type: 's3',
          bucket: 'bkt',
          key: `pre/${name},"q"`,
          ...(i % 2 ? { versionId: `v${i}` } : {}),
        },
        status: 'succeeded',
        digests: digests(name),
      })),
      { ...failedRow, source: { type: 's3', bucket: 'bkt', key: 'pre/gone' } },
      {
        name: 'http item',
        source: { type: 'http', url: 'https://example.com/x' },
        status: 'mismatch',
        digests: digests('x'),
        expected: { sha256: 'ab'.repeat(32) },
      },
    ];
    const text = await report('csv', csvRows);
    const parsed = JSON.parse(
      execFileSync(
        'python3',
        [
          '-c',
          'import csv,io,json,sys; print(json.dumps(list(csv.reader(io.StringIO(sys.stdin.read(), newline="")))))',
        ],
        {
          input: text,
        },
      ).toString(),
    ) as string[][];
    expect(parsed[0]).toEqual([
      'Bucket',
      'Key',
      'VersionId',
      'TaskStatus',
      'ErrorCode',
      'HTTPStatusCode',
      'ResultMessage',
      ...ALGORITHMS,
    ]);
    expect(parsed.slice(1, 1 + HARD_NAMES.length)).toEqual(
      HARD_NAMES.map((name, i) => [
        'bkt',
        `pre/${name},"q"`,
        i % 2 ? `v${i}` : '',
        'succeeded',
        '',
        '200',
        'Successful',
        ...ALGORITHMS.map((algorithm) => digests(name)[algorithm].hex),
      ]),
    );
    expect(parsed[HARD_NAMES.length + 1]).toEqual([
      'bkt',
      'pre/gone',
      '',
      'failed',
      'SOURCE_NOT_FOUND',
      '404',
      'file does not exist',
      '',
      '',
      '',
    ]);
    const mismatch = parsed[HARD_NAMES.length + 2];
    expect(mismatch.slice(0, 6)).toEqual(['', 'http item', '', 'failed', 'DIGEST_MISMATCH', '200']);
    expect(mismatch[6]).toBe(`sha256 expected ${'ab'.repeat(32)} got ${digests('x').sha256.hex}`);
    expect(parsed).toHaveLength(HARD_NAMES.length + 3);
  });

  it('jsonl: one object per line, names exact', async () => {
    const text = await report('jsonl', [...rows, failedRow]);
    const lines = text.split('\n');
    expect(lines.pop()).toBe('');
    const objects = lines.map((line) => JSON.parse(line) as ReportRow);
    expect(objects.map((object) => object.name)).toEqual([...HARD_NAMES, 'gone']);
    expect(objects[0]).toEqual({ ...rows[0], errorCode: null, errorMessage: null });
    expect(objects[HARD_NAMES.length]).toEqual({ ...failedRow, size: null });
  });

  it('streams: many rows come out in bounded pieces, in order', async () => {
    async function* many(): AsyncGenerator<ReportRow> {
      for (let i = 0; i < 20_000; i++) yield { ...rows[i % rows.length], name: `f${i}` };
    }
    const pieces: string[] = [];
    for await (const piece of writeReport('sha256sum', many(), {
      algorithm: 'sha256',
      algorithms: [],
    }))
      pieces.push(piece);
    expect(pieces.length).toBeGreaterThan(10);
    for (const piece of pieces) expect(piece.length).toBeLessThan(64 * 1024 + 200);
    const names = pieces
      .join('')
      .split('\n')
      .slice(0, -1)
      .map((line) => line.slice(66));
    expect(names).toEqual(Array.from({ length: 20_000 }, (_, i) => `f${i}`));
  });
});
