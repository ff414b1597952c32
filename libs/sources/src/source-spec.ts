import type { NetGuard } from './net-guard';
import { SourceError } from './source-error';

/** A normalized remote source as stored in jobs.source. */
export type RemoteSourceRef =
  | { type: 'http'; url: string; headers?: Record<string, string> }
  | { type: 's3'; bucket: string; key: string; versionId?: string };

const MAX_HEADERS = 32;
// RFC 9110 token for header names; values without CR/LF/NUL.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HEADER_VALUE = /^[^\r\n\0]*$/;
// Bucket names (S3 rules, relaxed to what path-style servers accept).
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

const invalid = (message: string, source: unknown) =>
  new SourceError('SOURCE_UNSUPPORTED', message, { source });

/**
 * What the WHATWG URL parser drops without a word: tabs and newlines anywhere, C0 controls and
 * spaces at either end. A URL holding them is refused rather than read as another URL.
 */
export function hasStrippedCharacters(url: string): boolean {
  // eslint-disable-next-line no-control-regex -- control characters are what this looks for
  return /[\t\n\r]|^[\x00-\x20]|[\x00-\x20]$/.test(url);
}

/**
 * Recognizes and normalizes the remote forms of a job's source:
 *   {"type":"http","url":"https://…","headers":{…}?} or "http(s)://…"
 *   {"type":"s3","bucket":"b","key":"k","versionId":"…"?} or "s3://bucket/key"
 * Returns null for anything else (a file source: the caller handles it).
 * Throws SOURCE_UNSUPPORTED for a malformed remote source, and
 * SOURCE_ADDRESS_FORBIDDEN for a URL whose host is a refused IP literal (host
 * names are checked when the worker connects).
 */
export function parseRemoteSource(source: unknown, guard?: NetGuard): RemoteSourceRef | null {
  if (typeof source === 'string') {
    const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(source)?.[1]?.toLowerCase();
    if (scheme === 'http' || scheme === 'https') return httpRef(source, undefined, guard, source);
    if (scheme === 's3') {
      const match = /^s3:\/\/([^/?#]+)\/(.+)$/i.exec(source);
      if (!match) throw invalid('s3 URL must be s3://bucket/key', source);
      let key: string;
      try {
        key = decodeURIComponent(match[2]);
      } catch {
        throw invalid('s3 URL key is not valid percent-encoding', source);
      }
      return s3Ref(match[1], key, undefined, source);
    }
    return null;
  }
  if (typeof source !== 'object' || source === null || Array.isArray(source)) return null;
  const { type, ...fields } = source as Record<string, unknown>;
  if (type === 'http') {
    const { url, headers, ...rest } = fields;
    rejectUnknown(rest, source);
    if (typeof url !== 'string') throw invalid('source.url must be a string', source);
    return httpRef(url, headers, guard, source);
  }
  if (type === 's3') {
    const { bucket, key, versionId, ...rest } = fields;
    rejectUnknown(rest, source);
    return s3Ref(bucket, key, versionId, source);
  }
  return null;
}

function rejectUnknown(rest: Record<string, unknown>, source: unknown): void {
  const names = Object.keys(rest);
  if (names.length > 0) throw invalid(`unknown field(s) in source: ${names.join(', ')}`, source);
}

function httpRef(
  text: string,
  headers: unknown,
  guard: NetGuard | undefined,
  source: unknown,
): RemoteSourceRef {
  if (hasStrippedCharacters(text)) {
    throw invalid('source.url must not contain tabs, newlines or surrounding spaces', source);
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid('source.url is not a valid URL', source);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw invalid('source.url must be http or https', source);
  if (url.hash) url.hash = '';
  guard?.assertHostAllowed(url.hostname);
  const ref: RemoteSourceRef = { type: 'http', url: url.href };
  if (headers !== undefined) {
    if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
      throw invalid('source.headers must be an object of strings', source);
    }
    const entries = Object.entries(headers as Record<string, unknown>);
    if (entries.length > MAX_HEADERS) throw invalid(`at most ${MAX_HEADERS} headers`, source);
    for (const [name, value] of entries) {
      if (!HEADER_NAME.test(name) || typeof value !== 'string' || !HEADER_VALUE.test(value)) {
        throw invalid(`invalid header ${JSON.stringify(name)}`, source);
      }
    }
    if (entries.length > 0) ref.headers = Object.fromEntries(entries) as Record<string, string>;
  }
  return ref;
}

function s3Ref(
  bucket: unknown,
  key: unknown,
  versionId: unknown,
  source: unknown,
): RemoteSourceRef {
  if (typeof bucket !== 'string' || !BUCKET.test(bucket))
    throw invalid('source.bucket must be a valid bucket name', source);
  if (typeof key !== 'string' || key.length === 0 || key.length > 1024)
    throw invalid('source.key must be 1 to 1024 characters', source);
  if (versionId !== undefined && (typeof versionId !== 'string' || versionId.length === 0)) {
    throw invalid('source.versionId must be a non-empty string', source);
  }
  return versionId === undefined
    ? { type: 's3', bucket, key }
    : { type: 's3', bucket, key, versionId: versionId as string };
}

/**
 * A stored source as the API shows it: header values (tokens, cookies) and a
 * URL's password never leave the database; the worker still gets them.
 */
export function publicSource<T>(source: T): T {
  if (
    typeof source !== 'object' ||
    source === null ||
    (source as { type?: unknown }).type !== 'http'
  )
    return source;
  const http = source as unknown as { url: string; headers?: Record<string, string> };
  const shown: { type: 'http'; url: string; headers?: Record<string, string> } = {
    type: 'http',
    url: http.url,
  };
  try {
    const url = new URL(http.url);
    if (url.password) {
      url.password = '***';
      shown.url = url.href;
    }
  } catch {
    // stored sources are normalized URLs; leave anything else as it is
  }
  if (http.headers)
    shown.headers = Object.fromEntries(Object.keys(http.headers).map((name) => [name, '***']));
  return shown as unknown as T;
}
