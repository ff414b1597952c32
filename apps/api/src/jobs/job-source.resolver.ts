import { isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';

import { HASHQ_CONFIG, type HashqConfig } from '@hashq/config';
import type { SourceRef } from '@hashq/jobs';
import {
  FileRoots,
  hasStrippedCharacters,
  NetGuard,
  parseRemoteSource,
  SourceError,
  type SourceErrorCode,
} from '@hashq/sources';
import { HttpStatus, Inject, Injectable } from '@nestjs/common';

import { ApiError, type ApiErrorCode } from '../common/api-error';

export interface ResolvedSource {
  ref: SourceRef;
  /** Known at submission for files; remote sources learn it when the worker opens them. */
  size: number | null;
}

/**
 * HTTP status of each refusal of a file source at submission (@hashq/sources' codes). Anything
 * else is unexpected here and answered as an internal error. SOURCE_READ_FAILED: the file system
 * failed (EIO, EMFILE, …), not the client; a retry may pass.
 */
const STATUS_BY_CODE = {
  PATH_OUTSIDE_ROOTS: HttpStatus.FORBIDDEN,
  SOURCE_FORBIDDEN: HttpStatus.FORBIDDEN,
  SOURCE_NOT_FOUND: HttpStatus.UNPROCESSABLE_ENTITY,
  NOT_A_REGULAR_FILE: HttpStatus.UNPROCESSABLE_ENTITY,
  SOURCE_READ_FAILED: HttpStatus.SERVICE_UNAVAILABLE,
} satisfies Partial<Record<SourceErrorCode & ApiErrorCode, HttpStatus>>;

const isFileRefusal = (code: string): code is keyof typeof STATUS_BY_CODE =>
  Object.hasOwn(STATUS_BY_CODE, code);

const invalid = (message: string, source: unknown): ApiError =>
  ApiError.badRequest('INVALID_SOURCE', message, { source });

/**
 * Turns the `source` of a request into a normalized, checked file reference: the file, opened
 * once beneath HASHQ_FILE_ROOTS (see FileRoots.locateRegularFile), must be a regular file; its real
 * path is stored and the size of the opened descriptor becomes the job's totalBytes.
 */
@Injectable()
export class JobSourceResolver {
  private readonly roots: FileRoots;
  private readonly guard: NetGuard;

  constructor(@Inject(HASHQ_CONFIG) config: HashqConfig) {
    this.roots = new FileRoots(config.fileRoots);
    this.guard = new NetGuard(config.allowHosts); // HASHQ_ALLOW_HOSTS, validated by @hashq/config
  }

  async resolve(source: unknown): Promise<ResolvedSource> {
    const remote = this.remoteSource(source);
    if (remote) return { ref: remote, size: null };
    const requested = this.requestedPath(source);
    try {
      const { path, stats } = await this.roots.locateRegularFile(requested);
      return { ref: { type: 'file', path }, size: Number(stats.size) };
    } catch (err) {
      if (err instanceof SourceError && isFileRefusal(err.code)) {
        throw new ApiError(STATUS_BY_CODE[err.code], err.code, err.message, { path: requested });
      }
      throw err;
    }
  }

  /** http(s)/s3 sources (see @hashq/sources' parseRemoteSource); null for a file source. */
  private remoteSource(source: unknown) {
    try {
      return parseRemoteSource(source, this.guard);
    } catch (err) {
      if (err instanceof SourceError && err.code === 'SOURCE_ADDRESS_FORBIDDEN') {
        throw new ApiError(HttpStatus.FORBIDDEN, err.code, err.message, err.details);
      }
      if (err instanceof SourceError) throw invalid(err.message, source);
      throw err;
    }
  }

  /** Accepts {"type":"file","path":"/abs"} or "file:///abs" and returns the absolute path. */
  private requestedPath(source: unknown): string {
    let path: unknown;
    if (typeof source === 'string') {
      path = this.pathOfUrl(source);
    } else if (typeof source === 'object' && source !== null && !Array.isArray(source)) {
      const { type, path: objectPath, ...rest } = source as Record<string, unknown>;
      if (type !== 'file') {
        throw invalid(
          `unsupported source type ${JSON.stringify(type ?? null)}: expected "file", "http" or "s3"`,
          source,
        );
      }
      const unknownFields = Object.keys(rest);
      if (unknownFields.length > 0) {
        throw invalid(`unknown field(s) in source: ${unknownFields.join(', ')}`, source);
      }
      path = objectPath;
    } else {
      throw invalid(
        'source must be an object {"type":"file","path":...} or a "file://" URL string',
        source,
      );
    }
    if (typeof path !== 'string' || path.length === 0)
      throw invalid('source.path must be a non-empty string', source);
    if (path.includes('\0')) throw invalid('source.path must not contain NUL', source);
    if (!isAbsolute(path)) throw invalid('source.path must be an absolute path', source);
    return path;
  }

  private pathOfUrl(text: string): string {
    if (hasStrippedCharacters(text)) {
      throw invalid('a source URL must not contain tabs, newlines or surrounding spaces', text);
    }
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw invalid('source string must be a file:// URL', text);
    }
    if (url.protocol !== 'file:')
      throw invalid(`unsupported source URL scheme "${url.protocol}"`, text);
    if (url.hostname !== '' && url.hostname !== 'localhost')
      throw invalid('file URL must not name a remote host', text);
    if (url.search || url.hash) throw invalid('file URL must not have a query or fragment', text);
    try {
      return fileURLToPath(url);
    } catch (err) {
      throw invalid(`invalid file URL: ${(err as Error).message}`, text);
    }
  }
}
