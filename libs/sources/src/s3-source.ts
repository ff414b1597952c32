import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';

import { HeadObjectCommand, type HeadObjectCommandOutput, S3Client } from '@aws-sdk/client-s3';

import { chunkBody } from './chunked-body';
import { parseContentRange } from './http-source';
import type { NetGuard } from './net-guard';
import { type Body, rangedChunks } from './ranged-body';
import type { RemoteConfig } from './remote-config';
import {
  S3_STORED_CHECKSUM_FIELDS,
  type S3ObjectLayout,
  type S3StoredChecksumAlgorithm,
  unquoteEtag,
} from './s3-checksum';
import { S3Get, type S3GetAnswer } from './s3-get';
import {
  type OpenedSource,
  type OpenOptions,
  sameVersion,
  type Source,
  type SourceVersion,
} from './source';
import { SourceError } from './source-error';

export interface S3SourceSpec {
  type: 's3';
  bucket: string;
  key: string;
  versionId?: string;
}

export * from './s3-checksum';

const DEFAULT_CHUNK_BYTES = 8 * 1024 * 1024;
/** Part-size HEADs in flight at once (objectLayout). */
const PART_HEAD_CONCURRENCY = 8;
/**
 * S3_PARALLEL_GETS's default: one stream. Ranged GETs side by side cost more CPU per byte in Node's
 * HTTP client than they win from a loopback s3rver on 2 cores (README, bench:e2e); they are for a
 * store whose single stream is slow (a remote endpoint).
 */
export const DEFAULT_PARALLEL_GETS = 1;
/**
 * Bodies longer than this (or of unknown length) are read into reused buffers over a connection
 * of their own (raw-http-get.ts); shorter ones through node:http's keep-alive pool, where a new
 * connection per object would cost more than the buffers save.
 */
const RAW_MIN_BYTES = 1024 * 1024;

/**
 * One S3 client per process for the configured endpoint; its agents resolve
 * through the SSRF guard, so every connection (retries included) is checked.
 * The SDK retries throttling (503 SlowDown, 429) and network errors itself
 * with exponential backoff, S3_MAX_ATTEMPTS times.
 */
export function createS3Client(config: RemoteConfig): S3Client {
  const lookup = config.guard.lookup;
  const httpAgent = new HttpAgent({ keepAlive: true, lookup });
  const httpsAgent = new HttpsAgent({ keepAlive: true, lookup });
  const client = new S3Client({
    region: config.s3.region,
    endpoint: config.s3.endpoint,
    forcePathStyle: config.s3.forcePathStyle,
    credentials: config.s3.credentials,
    maxAttempts: config.s3.maxAttempts,
    // Full-object checksum validation by the SDK would fail on ranged reads; hashq computes its own digests.
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: {
      httpAgent,
      httpsAgent,
      connectionTimeout: config.connectTimeoutMs,
      requestTimeout: config.idleTimeoutMs,
    },
  });
  const { endpoint, region, forcePathStyle, maxAttempts } = config.s3;
  const get = new S3Get(client, {
    endpoint,
    region,
    forcePathStyle,
    maxAttempts,
    httpAgent,
    httpsAgent,
    lookup,
    connectTimeoutMs: config.connectTimeoutMs,
    idleTimeoutMs: config.idleTimeoutMs,
  });
  gets.set(client, get);
  return client;
}

/** The lean GetObject of each client createS3Client made (same agents, guard and credentials). */
const gets = new WeakMap<S3Client, S3Get>();

function getOf(client: S3Client): S3Get {
  const get = gets.get(client);
  if (!get) throw new Error('S3Source needs a client made by createS3Client');
  return get;
}

/**
 * An object in S3-compatible storage. Identity: ETag, version id (when the
 * bucket is versioned) and size. A read asks one chunk from the offset first
 * (a ranged GetObject, with If-Match = the ETag and the version id when
 * resuming); the answer tells the size and the ETag, and a longer object is
 * read on as chunk-sized ranged GETs, a few in flight, each pinned with
 * If-Match to that ETag: an object replaced in between fails with
 * SOURCE_CHANGED (412 from S3, or a different ETag in the answer for servers
 * that ignore If-Match).
 */
export class S3Source implements Source {
  constructor(
    private readonly spec: S3SourceSpec,
    private readonly client: S3Client,
    private readonly guard: NetGuard,
    private readonly endpoint?: string,
    /** Ranged GETs in flight for an object longer than a chunk; 1: the rest in one stream. */
    private readonly parallelGets = DEFAULT_PARALLEL_GETS,
  ) {}

  async open(
    offset: number,
    expected?: SourceVersion | null,
    options: OpenOptions = {},
  ): Promise<OpenedSource> {
    this.checkEndpoint();
    const versionId =
      this.spec.versionId ??
      (typeof expected?.versionId === 'string' ? expected.versionId : undefined);
    const ifMatch = typeof expected?.etag === 'string' ? expected.etag : undefined;
    if (offset > 0 && expected && expected.size === offset) {
      // Resumed exactly at the end: nothing to read, only the identity to confirm.
      const version = await this.head(versionId, ifMatch);
      this.assertSame(expected, version);
      return {
        stream: (async function* () {})(),
        version,
        size: offset,
        close: async () => undefined,
      };
    }
    const chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES;
    // With parallel GETs, a read from an offset or of an object known (a batch's listing) to be
    // longer than a chunk asks one chunk first, and the answer's size tells what follows. Otherwise
    // the first GET asks the whole rest; when it shows a longer object, only its first chunk is read.
    const parallel = this.parallelGets > 1;
    const knownSize = typeof expected?.size === 'number' ? expected.size : null;
    const bounded =
      parallel && (offset > 0 || (knownSize !== null && knownSize - offset > chunkBytes));
    const asked = bounded
      ? `bytes=${offset}-${offset + chunkBytes - 1}`
      : offset > 0
        ? `bytes=${offset}-`
        : undefined;
    let out: S3GetAnswer;
    try {
      out = await getOf(this.client).send({
        bucket: this.spec.bucket,
        key: this.spec.key,
        versionId,
        ifMatch,
        range: asked,
        // a batch's small objects (size known from the listing) stay on keep-alive node:http
        pieceBytes:
          knownSize === null || knownSize - offset > RAW_MIN_BYTES ? chunkBytes : undefined,
        onBytes: options.onBytes,
      });
    } catch (err) {
      throw this.mapError(err, expected);
    }
    const body = out.Body as Body | undefined;
    try {
      let size: number | null;
      if (asked !== undefined) {
        const range = parseContentRange(out.ContentRange);
        if (!range || range.start !== offset || range.total === null) {
          throw new SourceError('SOURCE_READ_FAILED', 'S3 answered a different range than asked', {
            asked: offset,
            contentRange: out.ContentRange ?? null,
          });
        }
        size = range.total;
      } else {
        size = out.ContentLength ?? null;
      }
      const version: SourceVersion = {
        etag: out.ETag ?? null,
        versionId: out.VersionId ?? null,
        size,
      };
      if (expected) this.assertSame(expected, version);
      if (!body)
        throw new SourceError('SOURCE_READ_FAILED', 'S3 answered without a body', this.where());
      // Only ranged GETs side by side have requests to stop at close (an abort builds a
      // DOMException and its stack: a batch would pay it for every small object).
      const abort =
        parallel && size !== null && size - offset > chunkBytes ? new AbortController() : null;
      const stream =
        abort && size !== null
          ? rangedChunks({
              first: body,
              firstOpenEnded: !bounded,
              offset,
              size,
              segmentBytes: chunkBytes,
              inFlight: this.parallelGets,
              fetch: (start, end, signal) =>
                this.getRange(start, end, version, signal, options.onBytes),
              abort,
              what: 'S3 object',
            })
          : chunkBody(body, chunkBytes, size === null ? null : size - offset, 0, 'S3 object');
      let closed = false;
      const close = async () => {
        if (closed) return;
        closed = true;
        abort?.abort();
        body.destroy?.();
      };
      return { stream, version, size, close };
    } catch (err) {
      body?.destroy?.();
      throw err;
    }
  }

  /** Bytes [start, end] of the object `version` describes (If-Match on its ETag, its version id). */
  private async getRange(
    start: number,
    end: number,
    version: SourceVersion,
    signal: AbortSignal,
    onBytes?: (count: number) => void,
  ): Promise<Body> {
    let out: S3GetAnswer;
    try {
      out = await getOf(this.client).send({
        bucket: this.spec.bucket,
        key: this.spec.key,
        versionId: this.spec.versionId ?? (version.versionId as string | null) ?? undefined,
        ifMatch: (version.etag as string | null) ?? undefined,
        range: `bytes=${start}-${end}`,
        signal,
        pieceBytes: end - start + 1 > RAW_MIN_BYTES ? end - start + 1 : undefined,
        onBytes,
      });
    } catch (err) {
      throw this.mapError(err, version);
    }
    const body = out.Body as Body | undefined;
    const range = parseContentRange(out.ContentRange);
    const answered = { etag: out.ETag ?? null, size: range?.total ?? null };
    if (answered.etag !== version.etag || answered.size !== version.size) {
      body?.destroy?.();
      throw new SourceError('SOURCE_CHANGED', 'object changed while it was read', {
        ...this.where(),
        expected: version,
        actual: answered,
      });
    }
    if (!body || !range || range.start !== start || range.end !== end) {
      body?.destroy?.();
      throw new SourceError('SOURCE_READ_FAILED', 'S3 answered a different range than asked', {
        asked: `${start}-${end}`,
        contentRange: out.ContentRange ?? null,
      });
    }
    return body;
  }

  async currentVersion(): Promise<SourceVersion> {
    this.checkEndpoint();
    return this.head(this.spec.versionId, undefined);
  }

  /**
   * The object's part layout and stored checksums, pinned to `pinned` when
   * given (If-Match on its ETag, its version id), else to the ETag of the first
   * answer. One HeadObject
   * with ChecksumMode=ENABLED for the stored checksum, one with PartNumber=1 for
   * the parts count (x-amz-mp-parts-count; absent for a single-request upload),
   * then one per further part for its size (ContentLength), a few at a time.
   * A server that shows a multipart ETag ("…-N") but no parts count cannot give
   * the layout: SOURCE_UNSUPPORTED.
   */
  async objectLayout(pinned: SourceVersion | null): Promise<S3ObjectLayout> {
    this.checkEndpoint();
    let versionId =
      this.spec.versionId ?? (typeof pinned?.versionId === 'string' ? pinned.versionId : undefined);
    let ifMatch = typeof pinned?.etag === 'string' ? pinned.etag : undefined;
    const head = async (partNumber?: number): Promise<HeadObjectCommandOutput> => {
      try {
        return await this.client.send(
          new HeadObjectCommand({
            Bucket: this.spec.bucket,
            Key: this.spec.key,
            VersionId: versionId,
            IfMatch: ifMatch,
            PartNumber: partNumber,
            ChecksumMode: partNumber === undefined ? 'ENABLED' : undefined,
          }),
        );
      } catch (err) {
        throw this.mapError(err, pinned);
      }
    };
    const whole = await head();
    const version: SourceVersion = {
      etag: whole.ETag ?? null,
      versionId: whole.VersionId ?? null,
      size: whole.ContentLength ?? null,
    };
    if (pinned) this.assertSame(pinned, version);
    ifMatch ??= whole.ETag; // the part HEADs describe this very object
    versionId ??= whole.VersionId;
    const size = whole.ContentLength ?? 0;
    const stored: S3ObjectLayout['stored'] = {};
    for (const [algorithm, field] of Object.entries(S3_STORED_CHECKSUM_FIELDS)) {
      const value = whole[field];
      if (typeof value === 'string' && value !== '')
        stored[algorithm as S3StoredChecksumAlgorithm] = value;
    }
    const storedType =
      whole.ChecksumType === 'COMPOSITE' || whole.ChecksumType === 'FULL_OBJECT'
        ? whole.ChecksumType
        : null;

    const first = await head(1);
    const count = first.PartsCount ?? 0;
    let partSizes: number[] | null = null;
    if (count >= 1) {
      if (count > 10_000)
        throw this.layoutError(`S3 reports ${count} parts (at most 10,000 exist)`, {
          partsCount: count,
        });
      partSizes = new Array<number>(count);
      partSizes[0] = this.partSize(first, 1, count, whole.ETag);
      let next = 2;
      const worker = async () => {
        while (next <= count) {
          const part = next++;
          partSizes![part - 1] = this.partSize(await head(part), part, count, whole.ETag);
        }
      };
      await Promise.all(Array.from({ length: Math.min(PART_HEAD_CONCURRENCY, count - 1) }, worker));
      const sum = partSizes.reduce((total, part) => total + part, 0);
      if (sum !== size)
        throw this.layoutError('the part sizes S3 reports do not add up to the object size', {
          size,
          sum,
        });
    } else if (/-\d+$/.test(unquoteEtag(whole.ETag) ?? '')) {
      throw this.layoutError(
        'the object was uploaded in parts but the server does not report them (HeadObject PartNumber)',
        {
          etag: whole.ETag ?? null,
        },
      );
    }
    return {
      etag: version.etag as string | null,
      versionId: whole.VersionId ?? null,
      size,
      partSizes,
      stored,
      storedType,
    };
  }

  private partSize(
    out: HeadObjectCommandOutput,
    part: number,
    count: number,
    etag: string | undefined,
  ): number {
    if (out.PartsCount !== count || out.ETag !== etag || typeof out.ContentLength !== 'number') {
      throw this.layoutError(`S3 answered part ${part} inconsistently`, {
        part,
        partsCount: out.PartsCount ?? null,
        etag: out.ETag ?? null,
      });
    }
    return out.ContentLength;
  }

  private layoutError(message: string, details: Record<string, unknown>): SourceError {
    return new SourceError('SOURCE_UNSUPPORTED', `s3Checksum: ${message}`, {
      ...this.where(),
      ...details,
    });
  }

  private async head(
    versionId: string | undefined,
    ifMatch: string | undefined,
  ): Promise<SourceVersion> {
    try {
      const out = await this.client.send(
        new HeadObjectCommand({
          Bucket: this.spec.bucket,
          Key: this.spec.key,
          VersionId: versionId,
          IfMatch: ifMatch,
        }),
      );
      return {
        etag: out.ETag ?? null,
        versionId: out.VersionId ?? null,
        size: out.ContentLength ?? null,
      };
    } catch (err) {
      throw this.mapError(err, null);
    }
  }

  /** An IP-literal endpoint is connected to without a lookup: check it here. */
  private checkEndpoint(): void {
    if (this.endpoint) this.guard.assertHostAllowed(new URL(this.endpoint).hostname);
  }

  private assertSame(expected: SourceVersion, actual: SourceVersion): void {
    // A version id is only compared when both sides know one (unversioned buckets answer none).
    const a = { ...expected };
    const b = { ...actual };
    if (a.versionId == null || b.versionId == null) {
      delete a.versionId;
      delete b.versionId;
    }
    if (!sameVersion(a, b)) {
      throw new SourceError('SOURCE_CHANGED', 'object changed since the last checkpoint', {
        ...this.where(),
        expected,
        actual,
      });
    }
  }

  private where(): Record<string, unknown> {
    return { bucket: this.spec.bucket, key: this.spec.key, versionId: this.spec.versionId ?? null };
  }

  private mapError(err: unknown, expected: SourceVersion | null | undefined): SourceError {
    if (err instanceof SourceError) return err;
    const e = err as {
      name?: string;
      message?: string;
      code?: string;
      $metadata?: { httpStatusCode?: number };
    };
    const status = e.$metadata?.httpStatusCode;
    const name = e.name ?? 'Error';
    const details = { ...this.where(), status: status ?? null, s3Code: name };
    if (name === 'SourceError' || e.code === 'SOURCE_ADDRESS_FORBIDDEN') {
      return new SourceError('SOURCE_ADDRESS_FORBIDDEN', e.message ?? 'address forbidden', details);
    }
    if (status === 412 || name === 'PreconditionFailed') {
      return new SourceError(
        'SOURCE_CHANGED',
        'object changed since the last checkpoint (If-Match failed)',
        {
          ...details,
          expected: expected ?? null,
        },
      );
    }
    if (
      status === 404 ||
      name === 'NoSuchKey' ||
      name === 'NoSuchBucket' ||
      name === 'NotFound' ||
      name === 'NoSuchVersion'
    ) {
      return new SourceError('SOURCE_NOT_FOUND', `object not found (${name})`, details);
    }
    if (status === 403 || status === 401 || name === 'AccessDenied') {
      return new SourceError('SOURCE_FORBIDDEN', `access denied (${name})`, details);
    }
    // Throttling, 5xx and network errors: the SDK retried already; the job retries with backoff.
    return new SourceError(
      'SOURCE_READ_FAILED',
      `S3 request failed: ${e.message ?? name}`,
      details,
    );
  }
}
