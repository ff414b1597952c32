import type { S3Client } from '@aws-sdk/client-s3';

import { FileRoots } from './file-roots';
import { FileSource } from './file-source';
import { HttpSource } from './http-source';
import { type RemoteConfig, remoteConfig } from './remote-config';
import { createS3Client, S3Source } from './s3-source';
import type { Source } from './source';
import { SourceError } from './source-error';

/** A normalized source as stored in jobs.source, e.g. {"type":"file","path":"/abs"}. */
export interface SourceSpec {
  type: string;
  [field: string]: unknown;
}

/** Builds the Source for a stored spec; new source types register here. */
export class SourceFactory {
  private s3?: S3Client;
  private readonly narrowed = new Map<string, SourceFactory>();

  /**
   * `fileRoots`: where file sources are opened (null: nowhere). `remote`: HTTP/S3 settings and the
   * SSRF allow list (by default, the defaults: nothing internal).
   */
  constructor(
    private readonly fileRoots: FileRoots | null,
    private readonly remote: RemoteConfig = remoteConfig(),
    private readonly parent?: SourceFactory,
  ) {}

  /**
   * This factory with file sources opened beneath `roots` only (a tenant's file_roots, already
   * inside this factory's roots; none: no file source at all). Remote sources are the same.
   */
  withFileRoots(roots: readonly string[]): SourceFactory {
    return this.narrow(
      `roots\0${roots.join('\0')}`,
      () => new SourceFactory(roots.length > 0 ? new FileRoots(roots) : null, this.remote, this),
    );
  }

  create(spec: SourceSpec): Source {
    switch (spec.type) {
      case 'file':
        if (typeof spec.path !== 'string') {
          throw new SourceError('SOURCE_UNSUPPORTED', 'file source needs a path', { source: spec });
        }
        if (!this.fileRoots) {
          throw new SourceError('PATH_OUTSIDE_ROOTS', 'file path is outside the allowed roots', {
            path: spec.path,
          });
        }
        return new FileSource(spec.path, this.fileRoots);
      case 'http':
        if (typeof spec.url !== 'string') {
          throw new SourceError('SOURCE_UNSUPPORTED', 'http source needs a url', { source: spec });
        }
        return new HttpSource(
          {
            type: 'http',
            url: spec.url,
            headers: spec.headers as Record<string, string> | undefined,
          },
          this.remote,
        );
      case 's3':
        if (typeof spec.bucket !== 'string' || typeof spec.key !== 'string') {
          throw new SourceError('SOURCE_UNSUPPORTED', 's3 source needs a bucket and a key', {
            source: spec,
          });
        }
        return new S3Source(
          {
            type: 's3',
            bucket: spec.bucket,
            key: spec.key,
            versionId: spec.versionId as string | undefined,
          },
          this.s3Client(),
          this.remote.guard,
          this.remote.s3.endpoint,
          this.remote.s3.parallelGets,
        );
      default:
        throw new SourceError(
          'SOURCE_UNSUPPORTED',
          `unsupported source type: ${String(spec.type)}`,
          { source: spec },
        );
    }
  }

  /** This factory with HTTP(S) sources limited to `hosts` at every hop (a tenant's allowed_hosts). */
  withAllowedHosts(hosts: readonly string[]): SourceFactory {
    return this.narrow(
      `hosts\0${hosts.join('\0')}`,
      () => new SourceFactory(this.fileRoots, { ...this.remote, allowedHosts: hosts }, this),
    );
  }

  /** A narrowed factory, made once per setting (tenants share the ones of equal settings). */
  private narrow(key: string, make: () => SourceFactory): SourceFactory {
    let factory = this.narrowed.get(key);
    if (!factory) {
      factory = make();
      this.narrowed.set(key, factory);
    }
    return factory;
  }

  /** One S3 client for a factory and the ones narrowed from it. */
  private s3Client(): S3Client {
    if (this.parent) return this.parent.s3Client();
    this.s3 ??= createS3Client(this.remote);
    return this.s3;
  }
}
