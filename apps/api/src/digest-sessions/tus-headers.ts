import type { DigestValue } from '@hashq/jobs';
import { HttpStatus } from '@nestjs/common';

import { ApiError, type ApiErrorCode } from '../common/api-error';

/** The tus protocol version spoken here, and the extensions of it that are implemented. */
export const TUS_VERSION = '1.0.0';
export const TUS_EXTENSIONS = [
  'creation',
  'creation-defer-length',
  'checksum',
  'termination',
  'expiration',
];
export const OFFSET_STREAM = 'application/offset+octet-stream';
/** Upload-Metadata longer than this is refused (Node's own limit for all headers is 16 KiB). */
export const MAX_METADATA_CHARS = 4096;
/** tus's status for a chunk whose Upload-Checksum does not match. */
export const CHECKSUM_MISMATCH_STATUS = 460 as HttpStatus;

/** Names of the algorithms RFC 9530's registry has for Repr-Digest, by hashq name. */
const HTTP_DIGEST_NAMES: Record<string, string> = { sha256: 'sha-256', sha512: 'sha-512' };

const DECIMAL = /^\d{1,16}$/;
const METADATA_KEY = /^[^\s,]+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A non-negative decimal integer header (Upload-Offset, Upload-Length); `code` names the header's error. */
export function parseByteCount(
  value: string | undefined,
  header: string,
  code: ApiErrorCode,
): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!DECIMAL.test(value) || !Number.isSafeInteger(number)) {
    throw ApiError.badRequest(code, `${header} must be a non-negative decimal integer`, {
      header,
      value,
    });
  }
  return number;
}

/** True when `contentType` is application/offset+octet-stream (parameters and case ignored). */
export function isOffsetStream(contentType: string | undefined): boolean {
  return contentType?.split(';')[0].trim().toLowerCase() === OFFSET_STREAM;
}

/**
 * Upload-Metadata: `key base64,key base64,key` (tus creation extension). Keys are unique and
 * hold neither spaces nor commas; a value may be absent.
 */
export function parseMetadata(value: string | undefined): Map<string, Buffer> {
  const pairs = new Map<string, Buffer>();
  if (value === undefined || value.trim() === '') return pairs;
  if (value.length > MAX_METADATA_CHARS) {
    throw ApiError.badRequest(
      'UPLOAD_METADATA_TOO_LARGE',
      `Upload-Metadata is limited to ${MAX_METADATA_CHARS} characters`,
      {
        length: value.length,
        limit: MAX_METADATA_CHARS,
      },
    );
  }
  for (const pair of value.split(',')) {
    const [key, encoded = '', ...rest] = pair.trim().split(' ');
    if (!METADATA_KEY.test(key) || rest.length > 0 || !BASE64.test(encoded)) {
      throw ApiError.badRequest(
        'INVALID_UPLOAD_METADATA',
        'Upload-Metadata must be "key base64" pairs separated by commas',
        {
          pair: pair.trim().slice(0, 100),
        },
      );
    }
    if (pairs.has(key)) {
      throw ApiError.badRequest('INVALID_UPLOAD_METADATA', `Upload-Metadata names ${key} twice`, {
        key,
      });
    }
    pairs.set(key, Buffer.from(encoded, 'base64'));
  }
  return pairs;
}

/** Upload-Checksum: `<algorithm> <base64 digest>` of one PATCH body (tus checksum extension). */
export function parseChecksum(
  value: string | undefined,
): { algorithm: string; digest: Buffer } | undefined {
  if (value === undefined) return undefined;
  const match = /^(\S+) (\S+)$/.exec(value.trim());
  if (!match || !BASE64.test(match[2])) {
    throw ApiError.badRequest(
      'INVALID_UPLOAD_CHECKSUM',
      'Upload-Checksum must be "<algorithm> <base64 digest>"',
      {
        value: value.slice(0, 200),
      },
    );
  }
  return { algorithm: match[1], digest: Buffer.from(match[2], 'base64') };
}

/** 412 with the versions spoken here, for a request of another tus version (or none). */
export function unsupportedVersion(version: string | undefined): ApiError {
  return new ApiError(
    HttpStatus.PRECONDITION_FAILED,
    'UNSUPPORTED_TUS_VERSION',
    `Tus-Resumable must be ${TUS_VERSION}`,
    {
      received: version ?? null,
      supported: [TUS_VERSION],
    },
  );
}

/** RFC 9530 Repr-Digest (`sha-256=:base64:`) for the algorithms with a registered name; undefined without one. */
export function reprDigest(digests: Record<string, DigestValue>): string | undefined {
  const members = Object.entries(digests)
    .filter(([algorithm]) => HTTP_DIGEST_NAMES[algorithm])
    .map(([algorithm, { base64 }]) => `${HTTP_DIGEST_NAMES[algorithm]}=:${base64}:`);
  return members.length > 0 ? members.join(', ') : undefined;
}

/** Hashq-Digest: every requested algorithm in hex, as an RFC 8941 dictionary (`sha256="…", crc32="…"`). */
export function hashqDigest(digests: Record<string, DigestValue>): string {
  return Object.entries(digests)
    .map(([algorithm, { hex }]) => `${algorithm}="${hex}"`)
    .join(', ');
}
