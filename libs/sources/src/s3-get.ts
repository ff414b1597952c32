import {
  type Agent as HttpAgent,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  request as httpRequest,
} from 'node:http';
import { type Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';

import type { S3Client } from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';

import type { Body } from './ranged-body';
import { rawGet, RawHttpUnsupported, timeoutError } from './raw-http-get';

/** What one GetObject asks: the object (a version of it), pinned to an ETag, a byte range. */
export interface S3GetRequest {
  bucket: string;
  key: string;
  versionId?: string;
  ifMatch?: string;
  /** `bytes=a-b` or `bytes=a-` */
  range?: string;
  signal?: AbortSignal;
  /**
   * A large body is expected: over plain HTTP it is read in place into reused buffers of this many
   * bytes, the pieces the body yields (raw-http-get.ts).
   */
  pieceBytes?: number;
  /** Told the length of every piece of a 200/206 body as it arrives (progress watch). */
  onBytes?: (count: number) => void;
}

/** A 200/206 answer: its headers as GetObjectCommandOutput names them, its body being received. */
export interface S3GetAnswer {
  ETag?: string;
  VersionId?: string;
  ContentLength?: number;
  ContentRange?: string;
  Body: Body;
}

/** An answer's status, headers (lower-case names) and body, from either transport. */
interface Answered {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: Body;
  /** The body reports its pieces to onBytes itself (the raw reader does, node:http's does not). */
  counted: boolean;
}

export interface S3GetSettings {
  /** The configured endpoint (`http(s)://host[:port][/path]`); none: AWS's for the region. */
  endpoint?: string;
  region: string;
  forcePathStyle: boolean;
  maxAttempts: number;
  connectTimeoutMs: number;
  idleTimeoutMs: number;
  httpAgent: HttpAgent;
  httpsAgent: HttpsAgent;
  /** The SSRF guard's lookup (the agents' too). */
  lookup: LookupFunction;
}

/** Statuses S3 answers for throttling or a passing failure: asked again, as the SDK does. */
const RETRIED = new Set([429, 500, 502, 503, 504]);
const BACKOFF_BASE_MS = 100;
const BACKOFF_MAX_MS = 20_000;
/** Bytes of an error answer read for its S3 code (`<Code>NoSuchKey</Code>`). */
const ERROR_BODY_BYTES = 16 * 1024;

/**
 * GetObject as one signed GET on node:http(s), without the SDK's middleware stack: the SDK
 * costs about 2 ms of CPU per request (a batch reads thousands of small objects). Signed by the
 * SDK's own SigV4 signer with the client's credentials (its provider chain, refreshed as the SDK
 * refreshes them); sent through the agents of createS3Client, whose lookup is the SSRF guard.
 * Throttling, 5xx and network errors before the answer are retried (maxAttempts in all, with
 * exponential backoff and jitter); other statuses throw an error shaped like the SDK's
 * (`name` = S3's code, `$metadata.httpStatusCode`), so one mapping serves both.
 */
export class S3Get {
  private readonly signer: SignatureV4;
  /** Cleared when the endpoint answered a large GET without a plain Content-Length. */
  private rawWorks = true;

  constructor(
    client: S3Client,
    private readonly settings: S3GetSettings,
  ) {
    this.signer = new SignatureV4({
      service: 's3',
      region: settings.region,
      credentials: client.config.credentials,
      sha256: client.config.sha256,
      uriEscapePath: false, // the path is encoded here, once (S3's rule)
    });
  }

  async send(request: S3GetRequest): Promise<S3GetAnswer> {
    for (let attempt = 1; ; attempt++) {
      let res: Answered;
      try {
        res = await this.attempt(request);
      } catch (err) {
        if (err instanceof RawHttpUnsupported) {
          this.rawWorks = false;
          attempt--; // not a failure of the server: the same attempt through node:http
          continue;
        }
        if (!retriable(err, request.signal) || attempt >= this.settings.maxAttempts) throw err;
        await backoff(attempt, request.signal);
        continue;
      }
      const status = res.statusCode;
      if (status === 200 || status === 206) return answer(res, request.onBytes);
      const error = await s3Error(res);
      if (!RETRIED.has(status) || attempt >= this.settings.maxAttempts) throw error;
      await backoff(attempt, request.signal);
    }
  }

  private async attempt(request: S3GetRequest): Promise<Answered> {
    const url = this.url(request);
    const headers: Record<string, string> = { host: url.host };
    if (request.range) headers.range = request.range;
    if (request.ifMatch) headers['if-match'] = request.ifMatch;
    const query = request.versionId ? { versionId: request.versionId } : undefined;
    const signed = await this.signer.sign({
      method: 'GET',
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      path: url.pathname,
      query,
      headers,
    });
    const https = url.protocol === 'https:';
    const path = query ? `${url.pathname}?versionId=${encode(query.versionId)}` : url.pathname;
    const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
    if (!https && request.pieceBytes !== undefined && this.rawWorks) {
      const { connectTimeoutMs, idleTimeoutMs, lookup } = this.settings;
      const raw = await rawGet({
        host: hostname,
        port: Number(url.port || 80),
        path,
        lookup,
        connectTimeoutMs,
        idleTimeoutMs,
        pieceBytes: request.pieceBytes,
        onBytes: request.onBytes,
        signal: request.signal,
        headers: signed.headers,
      });
      return { ...raw, counted: true };
    }
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = (https ? httpsRequest : httpRequest)({
        protocol: url.protocol,
        hostname,
        port: url.port || undefined,
        path,
        method: 'GET',
        headers: signed.headers as OutgoingHttpHeaders,
        agent: https ? this.settings.httpsAgent : this.settings.httpAgent,
        signal: request.signal,
      });
      const connect = setTimeout(
        () => req.destroy(timeoutError('connect', this.settings.connectTimeoutMs)),
        this.settings.connectTimeoutMs,
      );
      req.once('socket', (socket) => {
        if (!socket.connecting) clearTimeout(connect);
        else socket.once('connect', () => clearTimeout(connect));
      });
      // Idle: no byte for idleTimeoutMs, waiting for the answer or within its body.
      req.setTimeout(this.settings.idleTimeoutMs, () =>
        req.destroy(timeoutError('idle', this.settings.idleTimeoutMs)),
      );
      req.once('response', (res) => {
        clearTimeout(connect);
        resolve(res);
      });
      req.once('error', (err) => {
        clearTimeout(connect);
        reject(err);
      });
      req.end();
    });
    return { statusCode: res.statusCode ?? 0, headers: res.headers, body: res, counted: false };
  }

  /** Path style (`endpoint/bucket/key`) or virtual-hosted (`bucket.host/key`), as the SDK would. */
  private url({ bucket, key }: S3GetRequest): URL {
    const { endpoint, region, forcePathStyle } = this.settings;
    const base = new URL(endpoint ?? `https://s3.${region}.amazonaws.com`);
    const basePath = base.pathname.replace(/\/+$/, '');
    // A name with dots would not match a wildcard TLS certificate: path style, as the SDK does.
    const virtual = !forcePathStyle && /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/.test(bucket);
    if (virtual) base.hostname = `${bucket}.${base.hostname}`;
    base.pathname = `${basePath}${virtual ? '' : `/${encode(bucket)}`}/${encodeKey(key)}`;
    return base;
  }
}

/** S3's URI encoding: every byte but A-Z a-z 0-9 - . _ ~ as %XX. */
function encode(value: string): string {
  return encodeURIComponent(value).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/** A key's segments encoded, its slashes kept. */
function encodeKey(key: string): string {
  return key.split('/').map(encode).join('/');
}

function answer(res: Answered, onBytes?: (count: number) => void): S3GetAnswer {
  const header = (name: string) => {
    const value = res.headers[name];
    return typeof value === 'string' ? value : undefined;
  };
  const length = header('content-length');
  return {
    ETag: header('etag'),
    VersionId: header('x-amz-version-id'),
    ContentLength: length === undefined ? undefined : Number(length),
    ContentRange: header('content-range'),
    Body: onBytes && !res.counted ? counting(res.body, onBytes) : res.body,
  };
}

/** `body` telling `onBytes` the length of each piece as it arrives. */
function counting(body: Body, onBytes: (count: number) => void): Body {
  const pieces = (async function* () {
    for await (const piece of body) {
      onBytes(piece.length);
      yield piece;
    }
  })();
  return Object.assign(pieces, { destroy: () => body.destroy?.() });
}

/** An error answer as the SDK would throw it: S3's code (from the XML body) as its name. */
async function s3Error(res: Answered): Promise<Error> {
  const status = res.statusCode;
  let text = '';
  try {
    for await (const piece of res.body) {
      text += (piece as Buffer).toString('utf8');
      if (text.length >= ERROR_BODY_BYTES) break;
    }
  } catch {
    // the code is a detail: the status decides
  } finally {
    res.body.destroy?.();
  }
  const code = /<Code>([^<]{1,64})<\/Code>/.exec(text)?.[1];
  const message = /<Message>([^<]{1,512})<\/Message>/.exec(text)?.[1];
  const name = code ?? (status === 404 ? 'NotFound' : `Http${status}`);
  return Object.assign(new Error(message ?? `S3 answered ${status}`), {
    name,
    $metadata: { httpStatusCode: status },
  });
}

/** Network errors are asked again; an abort, or an address the guard refused, is not. */
function retriable(err: unknown, signal: AbortSignal | undefined): boolean {
  if (signal?.aborted) return false;
  const e = err as { name?: string; code?: string };
  return e.name !== 'SourceError' && e.code !== 'SOURCE_ADDRESS_FORBIDDEN';
}

async function backoff(attempt: number, signal: AbortSignal | undefined): Promise<void> {
  const ms = Math.random() * Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** attempt);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener('abort', aborted);
      resolve();
    }
    function aborted() {
      clearTimeout(timer);
      reject(signal!.reason);
    }
    signal?.addEventListener('abort', aborted, { once: true });
  });
}
