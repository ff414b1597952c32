import {
  ListObjectsV2Command,
  type ListObjectsV2CommandOutput,
  type S3Client,
} from '@aws-sdk/client-s3';
import { type NetGuard, SourceError } from '@hashq/sources';

import { LiveIterator } from './live-iterator';
import type { ListedItem, Lister, ListPage } from './types';

export interface S3ListerOptions {
  /** The sources' client (createS3Client: the configured endpoint, the SSRF guard on its agents). */
  client: S3Client;
  bucket: string;
  /** Every object whose key starts with it ('' for the whole bucket); names are keys without it. */
  prefix: string;
  /** A key: the listing starts after it (ListObjectsV2 StartAfter). */
  startAfter?: string;
  /** With `endpoint`, an IP-literal endpoint is checked as S3Source does (no lookup to guard). */
  guard?: NetGuard;
  endpoint?: string;
}

/** Keys asked per ListObjectsV2 request: S3's own maximum. */
const S3_PAGE_KEYS = 1000;

/**
 * Every object under a prefix, in S3's order (UTF-8 bytes of the key), one ListObjectsV2 page at a
 * time. The cursor is the last key returned and every request asks StartAfter = that key, rather
 * than a continuation token: a key stays valid forever and on every S3-compatible server (a token
 * may expire or be opaque to another endpoint), and a page may end anywhere inside S3's page.
 * Keys are asked URL-encoded (EncodingType=url: XML cannot carry every character a key may hold,
 * and a CR would be read back as LF) and decoded only when the server says it encoded them.
 * Each item carries the ETag seen, so the job that hashes it is pinned to that very object.
 */
export class S3Lister implements Lister {
  private readonly live = new LiveIterator<ListedItem & { source: { key: string } }>(
    (cursor) => this.walk(cursor ?? this.options.startAfter),
    (item) => item.source.key,
  );

  constructor(private readonly options: S3ListerOptions) {}

  page(cursor: string | null, max: number): Promise<ListPage> {
    return this.live.page(cursor, max);
  }

  private async *walk(
    startAfter: string | undefined,
  ): AsyncGenerator<Array<ListedItem & { source: { key: string } }>> {
    const { bucket, prefix } = this.options;
    for (;;) {
      const out = await this.list(startAfter);
      const encoded = out.EncodingType === 'url';
      const items = (out.Contents ?? []).map((object) => {
        const key = encoded ? decodeS3Key(object.Key ?? '') : (object.Key ?? '');
        if (
          !key.startsWith(prefix) ||
          (startAfter !== undefined && compareUtf8(key, startAfter) <= 0)
        )
          throw this.error('SOURCE_READ_FAILED', 'S3 listed a key out of order', { key });
        return {
          name: key.slice(prefix.length),
          source: { type: 's3' as const, bucket, key },
          ...(object.Size !== undefined ? { size: object.Size } : {}),
          ...(object.ETag ? { etag: object.ETag } : {}),
        };
      });
      if (items.length > 0) {
        yield items;
        startAfter = items[items.length - 1].source.key;
      }
      if (!out.IsTruncated || items.length === 0) return;
    }
  }

  private async list(startAfter: string | undefined): Promise<ListObjectsV2CommandOutput> {
    const { client, bucket, prefix, guard, endpoint } = this.options;
    if (guard && endpoint) guard.assertHostAllowed(new URL(endpoint).hostname);
    try {
      return await client.send(
        new ListObjectsV2Command({
          Bucket: bucket,
          Prefix: prefix === '' ? undefined : prefix,
          StartAfter: startAfter,
          MaxKeys: S3_PAGE_KEYS,
          EncodingType: 'url',
        }),
      );
    } catch (err) {
      throw this.mapError(err);
    }
  }

  private mapError(err: unknown): SourceError {
    if (err instanceof SourceError) return err;
    const e = err as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
    const status = e.$metadata?.httpStatusCode;
    const name = e.name ?? 'Error';
    const details = { status: status ?? null, s3Code: name };
    if (name === 'NoSuchBucket' || status === 404)
      return this.error('SOURCE_NOT_FOUND', `bucket not found (${name})`, details);
    if (name === 'AccessDenied' || status === 403 || status === 401)
      return this.error('SOURCE_FORBIDDEN', `access denied (${name})`, details);
    return this.error('SOURCE_READ_FAILED', `S3 listing failed: ${e.message ?? name}`, details);
  }

  private error(
    code: SourceError['code'],
    message: string,
    details: Record<string, unknown>,
  ): SourceError {
    return new SourceError(code, message, {
      bucket: this.options.bucket,
      prefix: this.options.prefix,
      ...details,
    });
  }
}

/** A key as S3 writes it with EncodingType=url (form encoding: `+` for a space, as botocore reads it). */
export function decodeS3Key(encoded: string): string {
  return decodeURIComponent(encoded.replace(/\+/g, ' '));
}

/** S3's order: the UTF-8 bytes of the keys (not JavaScript's UTF-16 order). */
export function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
