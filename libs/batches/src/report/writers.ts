import { algorithmTag } from '../sums/algorithm-tags';
import { escapeName, needsEscape } from '../sums/coreutils-names';
import type { ItemStatus, ReportFormat, ReportOptions, ReportRow } from './types';

/** Rows are written out in pieces of about this many characters (not one tiny write per row). */
const PIECE_CHARS = 64 * 1024;

/**
 * A report, streamed: takes the rows as they come from the database and yields text pieces, so
 * memory does not grow with the batch. `sha256sum` and `bsd` write what coreutils writes (names
 * escaped as coreutils does, so `sha256sum -c` reads them back), `csv` the columns of an S3 Batch
 * Operations completion report plus one digest column per algorithm, `jsonl` one object per row.
 */
export async function* writeReport(
  format: ReportFormat,
  rows: AsyncIterable<ReportRow> | Iterable<ReportRow>,
  options: ReportOptions,
): AsyncGenerator<string> {
  const line = LINE_WRITERS[format];
  let piece = format === 'csv' ? csvHeader(options.algorithms) : '';
  for await (const row of rows) {
    piece += line(row, options);
    if (piece.length >= PIECE_CHARS) {
      yield piece;
      piece = '';
    }
  }
  if (piece !== '') yield piece;
}

const LINE_WRITERS: Record<ReportFormat, (row: ReportRow, options: ReportOptions) => string> = {
  sha256sum: gnuLine,
  bsd: bsdLine,
  csv: csvLine,
  jsonl: jsonLine,
};

/** `<hex>  <name>`, as `sha256sum` (or md5sum, sha512sum...) writes it; '' without that digest. */
export function gnuLine(row: ReportRow, { algorithm }: Pick<ReportOptions, 'algorithm'>): string {
  const digest = row.digests[algorithm];
  if (!digest) return '';
  const escape = needsEscape(row.name);
  return `${escape ? '\\' : ''}${digest.hex}  ${escape ? escapeName(row.name) : row.name}\n`;
}

/** `SHA256 (name) = <hex>`, as `sha256sum --tag` writes it; '' without that digest. */
export function bsdLine(row: ReportRow, { algorithm }: Pick<ReportOptions, 'algorithm'>): string {
  const digest = row.digests[algorithm];
  if (!digest) return '';
  const escape = needsEscape(row.name);
  const name = escape ? escapeName(row.name) : row.name;
  return `${escape ? '\\' : ''}${algorithmTag(algorithm)} (${name}) = ${digest.hex}\n`;
}

export const CSV_COLUMNS = [
  'Bucket',
  'Key',
  'VersionId',
  'TaskStatus',
  'ErrorCode',
  'HTTPStatusCode',
  'ResultMessage',
] as const;

function csvHeader(algorithms: readonly string[]): string {
  return csvRecord([...CSV_COLUMNS, ...algorithms]);
}

/**
 * One completion-report record: S3 objects give their bucket, key and version; other sources an
 * empty bucket and their name as the key. Keys are written as they are (RFC 4180 quoting keeps
 * them exact), not URL-encoded. A mismatch is a failed task with ErrorCode DIGEST_MISMATCH.
 */
export function csvLine(row: ReportRow, { algorithms }: Pick<ReportOptions, 'algorithms'>): string {
  const s3 = row.source.type === 's3' ? row.source : null;
  const errorCode =
    row.status === 'mismatch' ? (row.errorCode ?? 'DIGEST_MISMATCH') : row.errorCode;
  return csvRecord([
    s3?.bucket ?? '',
    s3?.key ?? row.name,
    s3?.versionId ?? '',
    taskStatus(row.status),
    errorCode ?? '',
    String(httpStatus(row.status, errorCode)),
    resultMessage(row),
    ...algorithms.map((algorithm) => row.digests[algorithm]?.hex ?? ''),
  ]);
}

function taskStatus(status: ItemStatus): string {
  return status === 'mismatch' ? 'failed' : status;
}

const ERROR_HTTP_STATUS: Readonly<Record<string, number>> = {
  SOURCE_NOT_FOUND: 404,
  SOURCE_FORBIDDEN: 403,
  SOURCE_ADDRESS_FORBIDDEN: 403,
  PATH_OUTSIDE_ROOTS: 403,
  SOURCE_CHANGED: 412,
  MANIFEST_LINE_INVALID: 400,
  NOT_A_REGULAR_FILE: 400,
  SOURCE_TOO_LARGE: 413,
  DIGEST_MISMATCH: 200, // the object was read fine; its content is not the expected one
};

function httpStatus(status: ItemStatus, errorCode: string | null | undefined): number | '' {
  if (status === 'succeeded') return 200;
  if (status !== 'failed' && status !== 'mismatch') return '';
  return ERROR_HTTP_STATUS[errorCode ?? ''] ?? 500;
}

function resultMessage(row: ReportRow): string {
  if (row.status === 'succeeded') return 'Successful';
  if (row.status === 'mismatch' && !row.errorMessage) {
    const wrong = Object.entries(row.expected ?? {})
      .filter(([algorithm, hex]) => row.digests[algorithm]?.hex !== hex)
      .map(
        ([algorithm, hex]) =>
          `${algorithm} expected ${hex} got ${row.digests[algorithm]?.hex ?? '-'}`,
      );
    return wrong.join('; ');
  }
  return row.errorMessage ?? '';
}

/** RFC 4180: a field holding a comma, quote, CR or LF (or blanks at an end) is quoted, quotes doubled. */
export function csvRecord(fields: readonly string[]): string {
  return `${fields.map(csvField).join(',')}\r\n`;
}

function csvField(field: string): string {
  return /[",\r\n]|^\s|\s$/.test(field) ? `"${field.replace(/"/g, '""')}"` : field;
}

/** One JSON object per line; a name's newline is escaped by JSON, so lines stay lines. */
export function jsonLine(row: ReportRow): string {
  return `${JSON.stringify({
    name: row.name,
    source: row.source,
    size: row.size ?? null,
    status: row.status,
    errorCode: row.errorCode ?? null,
    errorMessage: row.errorMessage ?? null,
    digests: row.digests,
    ...(row.expected ? { expected: row.expected } : {}),
  })}\n`;
}
