import { isAbsolute, resolve } from 'node:path';

import type { BatchSource } from '@hashq/batches/batches.repository';
import { normalizeSumsBase } from '@hashq/batches/sums-base';
import { HASHQ_CONFIG, type HashqConfig } from '@hashq/config';
import { NetGuard, parseRemoteSource, SourceError } from '@hashq/sources';
import { isWithin } from '@hashq/sources/open-beneath';
import { HttpStatus, Inject, Injectable } from '@nestjs/common';

import { ApiError } from '../common/api-error';
import { checkInlineList, type InlineHashing } from './inline-lists';

export interface ResolvedBatchSource {
  source: BatchSource;
  /** Inline manifest or SUM file content (stored beside the batch, read by the listing step). */
  manifest?: string;
}

// Bucket names (S3 rules, relaxed to what path-style servers accept), as for jobs.
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const MAX_KEY = 1024;

const invalid = (message: string, source: unknown): ApiError =>
  ApiError.badRequest('INVALID_SOURCE', message, { source });

type Fields = Record<string, unknown>;

/**
 * Checks and normalizes the `source` of POST /v1/batches. What can be known at once is checked
 * here (shapes, the file roots, a refused address, every line of an inline manifest or SUM
 * file: 400 with its line number); what needs the source itself (a missing bucket or
 * directory) fails the batch when its listing starts.
 */
@Injectable()
export class BatchSourceResolver {
  private readonly guard: NetGuard;

  constructor(@Inject(HASHQ_CONFIG) private readonly config: HashqConfig) {
    this.guard = new NetGuard(config.allowHosts);
  }

  /** `algorithms` and `outputLength`: the batch's, checked (a SUM file's digests must fit them). */
  async resolve(
    source: unknown,
    verify: 's3' | undefined,
    hashing: InlineHashing,
  ): Promise<ResolvedBatchSource> {
    if (typeof source !== 'object' || source === null || Array.isArray(source)) {
      throw invalid('source must be an object with a "type"', source);
    }
    const { type, ...fields } = source as Fields;
    if (verify === 's3' && type !== 's3') {
      throw ApiError.badRequest('S3_CHECKSUM_NOT_SUPPORTED', 'verify "s3" applies to s3 sources', {
        reason: 'source',
      });
    }
    switch (type) {
      case 'directory':
        return { source: this.directory(fields, source) };
      case 's3':
        return { source: this.s3(fields, source) };
      case 'manifest':
      case 'sums':
        return this.list(type, fields, source, hashing);
      default:
        throw invalid(
          `unsupported batch source type ${JSON.stringify(type ?? null)}: expected "directory", "s3", "manifest" or "sums"`,
          source,
        );
    }
  }

  private directory(fields: Fields, source: unknown): BatchSource {
    const { path, recursive, include, ...rest } = fields;
    rejectUnknown(rest, source);
    const dir = this.directoryPath(path, source);
    if (recursive !== undefined && typeof recursive !== 'boolean')
      throw invalid('source.recursive must be a boolean', source);
    if (include !== undefined && (typeof include !== 'string' || include.length === 0))
      throw invalid('source.include must be a non-empty glob', source);
    return {
      type: 'directory',
      path: dir,
      recursive: recursive ?? true,
      ...(include !== undefined ? { include } : {}),
    };
  }

  private s3(fields: Fields, source: unknown): BatchSource {
    const { bucket, prefix, startAfter, ...rest } = fields;
    rejectUnknown(rest, source);
    if (typeof bucket !== 'string' || !BUCKET.test(bucket))
      throw invalid('source.bucket must be a valid bucket name', source);
    for (const [name, value] of [
      ['prefix', prefix],
      ['startAfter', startAfter],
    ] as const) {
      if (value !== undefined && (typeof value !== 'string' || value.length > MAX_KEY))
        throw invalid(`source.${name} must be a string of at most ${MAX_KEY} characters`, source);
    }
    return {
      type: 's3',
      bucket,
      prefix: (prefix as string | undefined) ?? '',
      ...(startAfter !== undefined ? { startAfter } : {}),
    };
  }

  /** A manifest or a SUM file: inline (`content`, checked line by line now) or by `ref`. */
  private async list(
    type: 'manifest' | 'sums',
    fields: Fields,
    source: unknown,
    hashing: InlineHashing,
  ): Promise<ResolvedBatchSource> {
    const { content, ref, base, format, ...rest } = fields;
    rejectUnknown(rest, source);
    if ((content === undefined) === (ref === undefined))
      throw invalid(`a ${type} source needs exactly one of "content" and "ref"`, source);
    if (
      format !== undefined &&
      (type !== 'manifest' || !['csv', 'lines'].includes(format as string))
    )
      throw invalid('source.format must be "csv" or "lines" (manifest sources only)', source);
    const normalized: BatchSource = { type, ...(format !== undefined ? { format } : {}) };
    if (type === 'sums') normalized.base = this.base(base, source);
    else if (base !== undefined) throw invalid('source.base applies to sums sources', source);
    if (ref !== undefined) {
      normalized.ref = this.ref(ref, source);
      return { source: normalized };
    }
    if (typeof content !== 'string') throw invalid('source.content must be a string', source);
    await checkInlineList(normalized, content, hashing);
    return { source: normalized, manifest: content };
  }

  /** A directory inside HASHQ_FILE_ROOTS (lexically: its real path is checked when listed). */
  private directoryPath(path: unknown, source: unknown): string {
    if (typeof path !== 'string' || path.length === 0)
      throw invalid('source.path must be a non-empty string', source);
    if (path.includes('\0')) throw invalid('source.path must not contain NUL', source);
    if (!isAbsolute(path)) throw invalid('source.path must be an absolute path', source);
    if (path.split('/').includes('..'))
      throw new ApiError(HttpStatus.FORBIDDEN, 'PATH_OUTSIDE_ROOTS', 'path must not contain ".."', {
        path,
      });
    const lexical = resolve(path);
    if (!this.config.fileRoots.some((root) => isWithin(root, lexical))) {
      throw new ApiError(
        HttpStatus.FORBIDDEN,
        'PATH_OUTSIDE_ROOTS',
        'directory is outside the allowed roots',
        { path },
      );
    }
    return lexical;
  }

  /** The base of a SUM file's names: a directory, an s3://bucket/prefix or an http(s) URL prefix. */
  private base(base: unknown, source: unknown): string {
    if (typeof base !== 'string' || base.length === 0)
      throw invalid('source.base must be a directory, an s3://bucket/prefix or a URL', source);
    if (base.startsWith('/')) return this.directoryPath(base, source);
    const normalized = normalizeSumsBase(base);
    this.remote(`${normalized}x`, source);
    return normalized;
  }

  /** A manifest or SUM file by reference: a file path inside the roots, an s3:// URI or a URL. */
  private ref(ref: unknown, source: unknown): string {
    if (typeof ref !== 'string' || ref.length === 0)
      throw invalid('source.ref must be a file path, an s3:// URI or an http(s) URL', source);
    if (ref.startsWith('/')) return this.directoryPath(ref, source);
    this.remote(ref, source);
    return ref;
  }

  private remote(url: string, source: unknown): void {
    try {
      if (parseRemoteSource(url, this.guard) === null)
        throw invalid('expected an absolute path, an s3:// URI or an http(s) URL', source);
    } catch (err) {
      if (err instanceof SourceError && err.code === 'SOURCE_ADDRESS_FORBIDDEN')
        throw new ApiError(HttpStatus.FORBIDDEN, err.code, err.message, err.details);
      if (err instanceof SourceError) throw invalid(err.message, source);
      throw err;
    }
  }
}

function rejectUnknown(rest: Fields, source: unknown): void {
  const names = Object.keys(rest);
  if (names.length > 0) throw invalid(`unknown field(s) in source: ${names.join(', ')}`, source);
}
