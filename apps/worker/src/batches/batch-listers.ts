import type { S3Client } from '@aws-sdk/client-s3';
import type { LeasedBatch } from '@hashq/batches/batches.repository';
import { DirectoryLister } from '@hashq/batches/listing/directory-lister';
import { type OpenAt, openSourceAt } from '@hashq/batches/listing/line-lister';
import { ManifestLister } from '@hashq/batches/listing/manifest';
import { S3Lister } from '@hashq/batches/listing/s3-lister';
import type { Lister } from '@hashq/batches/listing/types';
import { type SumsBase, SumsLister } from '@hashq/batches/sums/sum-parser';
import { remoteSumsBase } from '@hashq/batches/sums-base';
import { HASHQ_CONFIG, type HashqConfig } from '@hashq/config';
import {
  createS3Client,
  FileRoots,
  parseRemoteSource,
  type RemoteConfig,
  remoteConfig,
  SourceError,
  SourceFactory,
  type SourceSpec,
} from '@hashq/sources';
import { Inject, Injectable } from '@nestjs/common';

/** The Lister of a batch's source (see libs/batches/src/listing). */
@Injectable()
export class BatchListers {
  private readonly roots: FileRoots;
  private readonly remote: RemoteConfig;
  private s3?: S3Client;

  constructor(
    @Inject(HASHQ_CONFIG) config: HashqConfig,
    private readonly sources: SourceFactory,
  ) {
    this.roots = new FileRoots(config.fileRoots);
    this.remote = remoteConfig(config);
  }

  async create(batch: LeasedBatch): Promise<Lister> {
    const source = batch.source;
    switch (source.type) {
      case 'directory':
        return new DirectoryLister({
          roots: this.roots,
          path: source.path as string,
          recursive: source.recursive as boolean,
          include: source.include as string | undefined,
        });
      case 's3':
        this.s3 ??= createS3Client(this.remote);
        return new S3Lister({
          client: this.s3,
          bucket: source.bucket as string,
          prefix: source.prefix as string,
          startAfter: source.startAfter as string | undefined,
          guard: this.remote.guard,
          endpoint: this.remote.s3.endpoint,
        });
      case 'manifest':
        return new ManifestLister(
          this.openList(batch),
          (source.format as 'csv' | 'lines' | undefined) ?? 'auto',
        );
      case 'sums':
        return new SumsLister(this.openList(batch), {
          base: await this.sumsBase(source.base as string),
          algorithms: batch.algorithms,
          outputLength: batch.options.outputLength,
        });
      default:
        throw new SourceError('SOURCE_UNSUPPORTED', `unsupported batch source ${source.type}`);
    }
  }

  /** What a SUM file's names are relative to: a directory (its real path), an S3 prefix, a URL. */
  private async sumsBase(base: string): Promise<SumsBase> {
    if (base.startsWith('/'))
      return { type: 'directory', path: await this.roots.resolveDirectory(base) };
    return remoteSumsBase(base);
  }

  /** The bytes of an inline list (kept with the batch) or of the object its `ref` names, from an offset. */
  private openList(batch: LeasedBatch): OpenAt {
    if (batch.manifest !== null) {
      const bytes = Buffer.from(batch.manifest, 'utf8');
      return async (offset) => [bytes.subarray(offset)];
    }
    const ref = batch.source.ref as string;
    const spec: SourceSpec = ref.startsWith('/')
      ? { type: 'file', path: ref }
      : (parseRemoteSource(ref, this.remote.guard) as SourceSpec);
    return openSourceAt(this.sources.create(spec));
  }
}
