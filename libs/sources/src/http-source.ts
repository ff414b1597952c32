import {
  Agent as HttpAgent,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  request as httpRequest,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

import { chunkBody } from './chunked-body';
import { hostAllowed } from './host-patterns';
import type { NetGuard } from './net-guard';
import {
  type OpenedSource,
  type OpenOptions,
  sameVersion,
  type Source,
  type SourceVersion,
} from './source';
import { SourceError } from './source-error';

export interface HttpSourceSpec {
  type: 'http';
  url: string;
  headers?: Record<string, string>;
}

export interface HttpSettings {
  guard: NetGuard;
  connectTimeoutMs: number;
  idleTimeoutMs: number;
  maxRedirects: number;
  /** A tenant's allowed_hosts, checked at every hop (redirects included); absent: any host. */
  allowedHosts?: readonly string[];
}

const DEFAULT_CHUNK_BYTES = 8 * 1024 * 1024;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Headers a caller may not set: they would break the byte accounting or the pinning. */
const RESERVED = new Set([
  'range',
  'if-range',
  'accept-encoding',
  'host',
  'content-length',
  'connection',
  'transfer-encoding',
]);

/**
 * A URL read with GET. Identity: strong ETag, Last-Modified and size. A resume
 * asks for `Range: bytes=<offset>-` with `If-Range` (the strong ETag, else
 * Last-Modified): a 206 must start at the offset and carry the same identity;
 * a 200 means the server ignored the Range or the resource changed: same
 * identity → the first <offset> bytes are skipped (counted in discardedBytes,
 * so they show in the job's bytesRead); other identity → SOURCE_CHANGED.
 * Without ETag and Last-Modified only the size pins the content.
 */
export class HttpSource implements Source {
  private readonly httpAgent: HttpAgent;
  private readonly httpsAgent: HttpsAgent;

  constructor(
    private readonly spec: HttpSourceSpec,
    private readonly settings: HttpSettings,
  ) {
    const lookup = settings.guard.lookup;
    this.httpAgent = new HttpAgent({ keepAlive: false, lookup });
    this.httpsAgent = new HttpsAgent({ keepAlive: false, lookup });
  }

  async open(
    offset: number,
    expected?: SourceVersion | null,
    options: OpenOptions = {},
  ): Promise<OpenedSource & { discardedBytes: number }> {
    const headers: OutgoingHttpHeaders = {};
    if (offset > 0) {
      headers.range = `bytes=${offset}-`;
      const validator = ifRangeValidator(expected);
      if (validator) headers['if-range'] = validator;
    }
    const res = await this.request(headers);
    try {
      const version = versionOf(res);
      let size: number | null;
      let skip = 0;
      if (res.statusCode === 206) {
        const range = parseContentRange(res.headers['content-range']);
        if (!range || range.start !== offset) {
          throw new SourceError(
            'SOURCE_READ_FAILED',
            'server answered a different range than asked',
            {
              asked: offset,
              contentRange: res.headers['content-range'] ?? null,
            },
          );
        }
        size = range.total;
        version.size = size;
      } else if (res.statusCode === 200) {
        size = version.size as number | null;
        skip = offset; // the whole body came back: drop what is already hashed
      } else if (res.statusCode === 416 && offset > 0 && expected && expected.size === offset) {
        // Resumed exactly at the end (checkpoint at the last byte): nothing left to read.
        size = offset;
        version.etag = (expected.etag as string | null) ?? null;
        version.lastModified = (expected.lastModified as string | null) ?? null;
        version.size = offset;
      } else {
        throw statusError(res.statusCode ?? 0, this.spec.url);
      }
      if (expected && !sameVersion(expected, version)) {
        throw new SourceError('SOURCE_CHANGED', 'resource changed since the last checkpoint', {
          url: redact(this.spec.url),
          expected,
          actual: version,
        });
      }
      if (size !== null && offset > size) {
        throw new SourceError('SOURCE_CHANGED', 'offset is past the end of the resource', {
          offset,
          size,
        });
      }
      const remaining = size === null ? null : size - offset;
      const chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES;
      const stream =
        res.statusCode === 416
          ? emptyBody()
          : chunkBody(res, chunkBytes, remaining, skip, 'HTTP body', options.onBytes);
      let closed = false;
      const close = async () => {
        if (closed) return;
        closed = true;
        res.destroy();
      };
      return { stream, version, size, close, discardedBytes: skip };
    } catch (err) {
      res.destroy();
      throw err;
    }
  }

  /**
   * Identity now, from a GET of one byte (`Range: bytes=0-0`): URLs signed for GET only (S3/GCS
   * presigned, Azure SAS) refuse HEAD. The size is the total of the 206's Content-Range, or the
   * Content-Length of a 200 (Range ignored: its body is dropped unread). A 416 means the resource is
   * empty: asked again without Range for its validators.
   */
  async currentVersion(): Promise<SourceVersion> {
    let res = await this.request({ range: 'bytes=0-0' });
    if (res.statusCode === 416) {
      res.destroy();
      res = await this.request({});
    }
    res.destroy();
    const version = versionOf(res);
    if (res.statusCode === 200) return version;
    if (res.statusCode !== 206) throw statusError(res.statusCode ?? 0, this.spec.url);
    const range = parseContentRange(res.headers['content-range']);
    if (!range) {
      throw new SourceError('SOURCE_READ_FAILED', 'a 206 without a valid Content-Range', {
        contentRange: res.headers['content-range'] ?? null,
      });
    }
    return { ...version, size: range.total };
  }

  /** One GET, following at most maxRedirects redirects, each target checked by the guard. */
  private async request(extra: OutgoingHttpHeaders): Promise<IncomingMessage> {
    let url = parseUrl(this.spec.url);
    const origin = url.origin;
    for (let hop = 0; ; hop++) {
      const headers: OutgoingHttpHeaders = { 'accept-encoding': 'identity', ...extra };
      for (const [name, value] of Object.entries(this.spec.headers ?? {})) {
        const lower = name.toLowerCase();
        if (RESERVED.has(lower)) continue;
        // Credentials go to the origin the user named, not to where it redirects.
        if (url.origin !== origin && (lower === 'authorization' || lower === 'cookie')) continue;
        headers[lower] = value;
      }
      const res = await this.send(url, headers);
      const status = res.statusCode ?? 0;
      if (!REDIRECTS.has(status)) return res;
      res.resume();
      const location = res.headers.location;
      if (!location)
        throw new SourceError('SOURCE_READ_FAILED', `redirect ${status} without a Location`, {
          url: redact(url.href),
        });
      if (hop >= this.settings.maxRedirects) {
        throw new SourceError(
          'SOURCE_UNSUPPORTED',
          `more than ${this.settings.maxRedirects} redirects`,
          { url: redact(this.spec.url) },
        );
      }
      url = parseUrl(new URL(location, url).href);
    }
  }

  private send(url: URL, headers: OutgoingHttpHeaders): Promise<IncomingMessage> {
    this.settings.guard.assertHostAllowed(url.hostname);
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const allowed = this.settings.allowedHosts;
    if (allowed && !hostAllowed(allowed, host)) {
      throw new SourceError(
        'SOURCE_NOT_ALLOWED',
        `host ${host} is not among the tenant's allowed hosts`,
        {
          host,
        },
      );
    }
    const secure = url.protocol === 'https:';
    return new Promise((resolve, reject) => {
      const req = (secure ? httpsRequest : httpRequest)(url, {
        method: 'GET',
        headers,
        agent: secure ? this.httpsAgent : this.httpAgent,
      });
      const timer = setTimeout(() => {
        req.destroy(
          new SourceError(
            'SOURCE_READ_FAILED',
            `no response within ${this.settings.connectTimeoutMs} ms`,
            { url: redact(url.href) },
          ),
        );
      }, this.settings.connectTimeoutMs);
      req.setTimeout(this.settings.idleTimeoutMs, () => {
        req.destroy(
          new SourceError(
            'SOURCE_READ_FAILED',
            `connection idle for ${this.settings.idleTimeoutMs} ms`,
            { url: redact(url.href) },
          ),
        );
      });
      req.once('response', (res) => {
        clearTimeout(timer);
        resolve(res);
      });
      req.once('error', (err) => {
        clearTimeout(timer);
        reject(toSourceError(err, url));
      });
      req.end();
    });
  }
}

async function* emptyBody(): AsyncGenerator<Buffer> {}

function parseUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new SourceError('SOURCE_UNSUPPORTED', 'invalid URL', { url: text });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new SourceError('SOURCE_UNSUPPORTED', `unsupported URL scheme "${url.protocol}"`, {
      url: redact(text),
    });
  }
  return url;
}

/** URLs go into error details: never their user:password part. */
export function redact(text: string): string {
  try {
    const url = new URL(text);
    if (url.username || url.password) {
      url.username = '***';
      url.password = '';
    }
    return url.href;
  } catch {
    return '(invalid URL)';
  }
}

function versionOf(res: IncomingMessage): SourceVersion {
  const etag = typeof res.headers.etag === 'string' ? res.headers.etag : null;
  const lastModified =
    typeof res.headers['last-modified'] === 'string' ? res.headers['last-modified'] : null;
  const length = res.headers['content-length'];
  const size = length !== undefined && /^\d+$/.test(length) ? Number(length) : null;
  return { etag, lastModified, size };
}

/** If-Range needs a strong validator: a strong ETag, else Last-Modified. */
function ifRangeValidator(expected?: SourceVersion | null): string | undefined {
  const etag = expected?.etag;
  if (typeof etag === 'string' && !etag.startsWith('W/')) return etag;
  const lastModified = expected?.lastModified;
  return typeof lastModified === 'string' ? lastModified : undefined;
}

export function parseContentRange(
  value: string | undefined,
): { start: number; end: number; total: number | null } | null {
  const match = value ? /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(value.trim()) : null;
  if (!match) return null;
  return {
    start: Number(match[1]),
    end: Number(match[2]),
    total: match[3] === '*' ? null : Number(match[3]),
  };
}

function statusError(status: number, url: string): SourceError {
  const details = { url: redact(url), status };
  if (status === 404 || status === 410)
    return new SourceError('SOURCE_NOT_FOUND', `HTTP ${status}`, details);
  if (status === 401 || status === 403)
    return new SourceError('SOURCE_FORBIDDEN', `HTTP ${status}`, details);
  if (status === 408 || status === 429 || status >= 500)
    return new SourceError('SOURCE_READ_FAILED', `HTTP ${status}`, details);
  return new SourceError('SOURCE_UNSUPPORTED', `unexpected HTTP status ${status}`, details);
}

function toSourceError(err: unknown, url: URL): SourceError {
  if (err instanceof SourceError) return err;
  const e = err as NodeJS.ErrnoException;
  if (e.code === 'ENOTFOUND')
    return new SourceError('SOURCE_NOT_FOUND', `host not found: ${url.hostname}`, {
      url: redact(url.href),
    });
  return new SourceError('SOURCE_READ_FAILED', `request failed: ${e.message}`, {
    url: redact(url.href),
    cause: e.code ?? e.name,
  });
}
