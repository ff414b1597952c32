import type { SourceRef } from '@hashq/jobs';

import { LineLister, type OpenAt } from './line-lister';
import {
  type ByteSource,
  type Line,
  type LinePosition,
  lineText,
  readLines,
  withoutBom,
} from './lines';
import { decodeS3Key } from './s3-lister';
import type { ListedItem } from './types';

/**
 * `csv`: S3 Batch Operations' manifest (S3BatchOperations_CSV_20180820): `bucket,key[,versionId]`
 * per record, RFC 4180 quoting, keys URL-encoded as S3 writes them. `lines`: one http(s) URL,
 * absolute file path or `s3://bucket/key` URI per line. `auto`: `lines` when the first line that
 * is not blank starts with `http://`, `https://`, `s3://` or `/`, else `csv`.
 */
export type ManifestFormat = 'csv' | 'lines' | 'auto';

/** A line that is not a valid entry: its number and why. */
export interface ManifestLineError {
  line: number;
  message: string;
}

/** Thrown by parseInlineManifest: every bad line (up to a limit), so the API can answer 400. */
export class ManifestInvalidError extends Error {
  override readonly name = 'ManifestInvalidError';
  readonly code = 'MANIFEST_LINE_INVALID';

  constructor(readonly errors: ManifestLineError[]) {
    super(
      `manifest line ${errors[0].line}: ${errors[0].message}` +
        (errors.length > 1 ? ` (and ${errors.length - 1} more bad lines)` : ''),
    );
  }
}

/** S3's limit on a key. */
const MAX_KEY_BYTES = 1024;
/** A record of the CSV may span lines (a quoted newline), up to this many. */
const MAX_RECORD_LINES = 64;

/** What stands in for the source of an item whose line is bad: never opened (see `error`). */
export const NO_SOURCE: SourceRef = Object.freeze({ type: 'http', url: '' }) as SourceRef;

/**
 * The items of a manifest, one per entry, in file order, each with its line number. A bad entry
 * becomes an item with `error` (MANIFEST_LINE_INVALID) and NO_SOURCE as its source, so a manifest
 * given by reference fails only its bad lines. Blank lines (and in `lines`, `#` comments) are
 * skipped. `next` after each item is where the following record starts (the resume point).
 */
export async function* parseManifest(
  stream: ByteSource,
  format: ManifestFormat,
  from: LinePosition = { line: 1, offset: 0 },
): AsyncGenerator<ListedItem & { line: number; next: LinePosition }> {
  let resolved = format;
  const isCsv = (line: Line): boolean => {
    if (resolved === 'auto') {
      const text = lineText(withoutBom(line))?.trim() ?? '';
      if (text !== '' && !text.startsWith('#'))
        resolved = /^(https?:\/\/|s3:\/\/|\/)/i.test(text) ? 'lines' : 'csv';
    }
    return resolved === 'csv';
  };
  for await (const record of csvRecords(readLines(stream, from), isCsv)) {
    const text = lineText(withoutBom(record));
    const line = record.start.line;
    if (text === null) {
      yield { ...invalidLine(line, 'line is not UTF-8', ''), next: record.next };
      continue;
    }
    const content = text.endsWith('\r') ? text.slice(0, -1) : text;
    if (content.trim() === '') continue;
    if (record.tooLong) {
      yield { ...invalidLine(line, 'line is too long', content.slice(0, 256)), next: record.next };
      continue;
    }
    if (resolved !== 'csv' && content.startsWith('#')) continue; // no CSV record starts so
    const item = resolved === 'csv' ? csvItem(content, line) : lineItem(content, line);
    yield { ...item, next: record.next };
  }
}

/**
 * A manifest given inline (bounded by the API's size limit): its items, or ManifestInvalidError
 * listing the bad lines (at most `maxErrors`) before anything runs.
 */
export function parseInlineManifest(
  content: string | Buffer,
  format: ManifestFormat,
  maxErrors = 100,
): Promise<ListedItem[]> {
  return collectInline(parseManifest([content], format), maxErrors);
}

/** The items of an inline file, or ManifestInvalidError with its bad lines (up to `maxErrors`). */
export async function collectInline(
  parsed: AsyncIterable<ListedItem & { line: number; next: LinePosition }>,
  maxErrors: number,
): Promise<ListedItem[]> {
  const items: ListedItem[] = [];
  const errors: ManifestLineError[] = [];
  for await (const { next: _next, ...item } of parsed) {
    if (item.error) {
      errors.push({ line: item.line, message: item.error.message });
      if (errors.length >= maxErrors) break;
    } else {
      items.push(item);
    }
  }
  if (errors.length > 0) throw new ManifestInvalidError(errors);
  return items;
}

/** A manifest read by reference, resumable: the cursor is where the next record starts. */
export class ManifestLister extends LineLister {
  constructor(open: OpenAt, format: ManifestFormat) {
    super(open, (stream, from) => parseManifest(stream, format, from));
  }
}

/**
 * The records of the CSV: lines joined while a quoted field is open (an odd number of quotes so
 * far; RFC 4180 lets a quoted field hold a newline). A quote never closed (by the end of the file
 * or within MAX_RECORD_LINES) makes only its own line a bad record: the lines after it are read
 * again one by one, so one stray quote cannot swallow the rest of a manifest. Lines of another
 * format pass as they are.
 */
async function* csvRecords(
  lines: AsyncIterable<Line>,
  isCsv: (line: Line) => boolean,
): AsyncGenerator<Line> {
  const source = lines[Symbol.asyncIterator]();
  const again: Line[] = [];
  let pending: Line[] = [];
  let quotes = 0;
  for (;;) {
    const line = again.shift() ?? (await source.next()).value;
    if (line === undefined && pending.length === 0) return;
    if (line !== undefined && pending.length === 0 && !isCsv(line)) {
      yield line;
      continue;
    }
    if (line !== undefined) {
      pending.push(line);
      quotes += quoteCount(line.bytes);
      if (quotes % 2 === 0) {
        yield joined(pending);
        [pending, quotes] = [[], 0];
        continue;
      }
      if (pending.length < MAX_RECORD_LINES) continue;
    }
    yield pending[0]; // an unterminated quoted field: the parser says so
    again.unshift(...pending.slice(1));
    [pending, quotes] = [[], 0];
  }
}

function joined(lines: Line[]): Line {
  if (lines.length === 1) return lines[0];
  const last = lines[lines.length - 1];
  return {
    bytes: Buffer.concat(
      lines.flatMap((line, i) => (i === 0 ? [line.bytes] : [NEWLINE, line.bytes])),
    ),
    start: lines[0].start,
    next: last.next,
    ...(lines.some((line) => line.tooLong) ? { tooLong: true } : {}),
  };
}

const NEWLINE = Buffer.from('\n');

function quoteCount(bytes: Buffer): number {
  let n = 0;
  for (let i = bytes.indexOf(0x22); i !== -1; i = bytes.indexOf(0x22, i + 1)) n++;
  return n;
}

function csvItem(content: string, line: number): ListedItem & { line: number } {
  const fields = parseCsvRecord(content);
  if (typeof fields === 'string') return invalidLine(line, fields, content);
  if (fields.length < 2 || fields.length > 3)
    return invalidLine(
      line,
      `expected bucket,key[,versionId], got ${fields.length} fields`,
      content,
    );
  const [bucket, encodedKey, versionId] = fields;
  if (!/^[A-Za-z0-9._-]{1,255}$/.test(bucket))
    return invalidLine(line, 'bucket name is not valid', content);
  let key: string;
  try {
    key = decodeS3Key(encodedKey);
  } catch {
    return invalidLine(line, 'key is not valid URL encoding', content);
  }
  const problem = keyProblem(key);
  if (problem) return invalidLine(line, problem, content);
  const source: SourceRef =
    versionId === undefined || versionId === ''
      ? { type: 's3', bucket, key }
      : { type: 's3', bucket, key, versionId };
  return { name: key, source, line };
}

/** The fields of one CSV record (RFC 4180), or why it is not one. */
export function parseCsvRecord(record: string): string[] | string {
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    let field = '';
    if (record[i] === '"') {
      for (i++; ; i++) {
        if (i >= record.length) return 'unterminated quoted field';
        if (record[i] === '"') {
          if (record[i + 1] !== '"') break;
          i++;
        }
        field += record[i];
      }
      i++; // the closing quote
      if (i < record.length && record[i] !== ',')
        return 'unexpected character after a quoted field';
    } else {
      const end = record.indexOf(',', i);
      field = record.slice(i, end === -1 ? record.length : end);
      if (field.includes('"')) return 'quote inside an unquoted field';
      i = end === -1 ? record.length : end;
    }
    fields.push(field);
    if (i >= record.length) return fields;
    i++; // the comma
  }
}

function lineItem(content: string, line: number): ListedItem & { line: number } {
  if (/^https?:\/\//i.test(content)) {
    let url: URL;
    try {
      url = new URL(content);
    } catch {
      return invalidLine(line, 'not a valid URL', content);
    }
    if (url.username || url.password)
      return invalidLine(line, 'URL must not hold credentials', content);
    return { name: content, source: { type: 'http', url: content }, line };
  }
  if (/^s3:\/\//i.test(content)) {
    const rest = content.slice('s3://'.length);
    const slash = rest.indexOf('/');
    const bucket = slash === -1 ? rest : rest.slice(0, slash);
    const key = slash === -1 ? '' : rest.slice(slash + 1);
    if (!/^[A-Za-z0-9._-]{1,255}$/.test(bucket))
      return invalidLine(line, 'bucket name is not valid', content);
    const problem = keyProblem(key);
    if (problem) return invalidLine(line, problem, content);
    return { name: content, source: { type: 's3', bucket, key }, line };
  }
  if (content.startsWith('/')) {
    if (content.includes('\0')) return invalidLine(line, 'file path holds a NUL', content);
    if (content.split('/').includes('..'))
      return invalidLine(line, 'file path must not contain ".."', content);
    return { name: content, source: { type: 'file', path: content }, line };
  }
  return invalidLine(line, 'not an http(s) URL, s3:// URI or absolute file path', content);
}

function keyProblem(key: string): string | null {
  if (key === '') return 'key is empty';
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) return 'key is longer than 1024 bytes';
  return null;
}

/** The item of a bad line: it fails MANIFEST_LINE_INVALID, its source is NO_SOURCE. */
export function invalidLine(
  line: number,
  message: string,
  content: string,
): ListedItem & { line: number } {
  return {
    name: content,
    source: NO_SOURCE,
    line,
    error: { code: 'MANIFEST_LINE_INVALID', message: `line ${line}: ${message}` },
  };
}
