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

  /** `remote`: HTTP/S3 settings and the SSRF allow list (by default, the defaults: nothing internal). */
  constructor(
    private readonly fileRoots: FileRoots,
    private readonly remote: RemoteConfig = remoteConfig(),
  ) {}

  create(spec: SourceSpec): Source {
    switch (spec.type) {
      case 'file':
        if (typeof spec.path !== 'string') {
          throw new SourceError('SOURCE_UNSUPPORTED', 'file source needs a path', { source: spec });
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
        this.s3 ??= createS3Client(this.remote);
        return new S3Source(
          {
            type: 's3',
            bucket: spec.bucket,
            key: spec.key,
            versionId: spec.versionId as string | undefined,
          },
          this.s3,
          this.remote.guard,
          this.remote.s3.endpoint,
        );
      default:
        throw new SourceError(
          'SOURCE_UNSUPPORTED',
          `unsupported source type: ${String(spec.type)}`,
          { source: spec },
        );
    }
  }
}
