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
  remoteRefusal,
  type SourceRef,
  type Tenant,
  tenantFileRoots,
  TenantsRepository,
} from '@hashq/jobs';
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

/**
 * The Lister of a batch's source (see libs/batches/src/listing), within what the batch's tenant may
 * read (docs/tenants.md): local files beneath its file_roots (inside HASHQ_FILE_ROOTS), s3 buckets
 * among its allowed_buckets, URLs of its allowed_hosts; a base it may not read fails the listing.
 */
@Injectable()
export class BatchListers {
  private readonly remote: RemoteConfig;
  private s3?: S3Client;

  constructor(
    @Inject(HASHQ_CONFIG) private readonly config: HashqConfig,
    private readonly sources: SourceFactory,
    private readonly tenants: TenantsRepository,
  ) {
    this.remote = remoteConfig(config);
  }

  async create(batch: LeasedBatch): Promise<Lister> {
    const source = batch.source;
    const tenant = await this.tenants.settings(batch.tenantId);
    if (!tenant) throw new Error(`unknown tenant ${batch.tenantId}`);
    const roots = rootsOf(tenant, this.config.fileRoots);
    switch (source.type) {
      case 'directory':
        return new DirectoryLister({
          roots: roots(),
          path: source.path as string,
          recursive: source.recursive as boolean,
          include: source.include as string | undefined,
        });
      case 's3':
        allow(tenant, { type: 's3', bucket: source.bucket as string, key: '' });
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
          this.openList(batch, tenant),
          (source.format as 'csv' | 'lines' | undefined) ?? 'auto',
        );
      case 'sums':
        return new SumsLister(this.openList(batch, tenant), {
          base: await this.sumsBase(source.base as string, tenant, roots),
          algorithms: batch.algorithms,
          outputLength: batch.options.outputLength,
        });
      default:
        throw new SourceError('SOURCE_UNSUPPORTED', `unsupported batch source ${source.type}`);
    }
  }

  /** What a SUM file's names are relative to: a directory (its real path), an S3 prefix, a URL. */
  private async sumsBase(base: string, tenant: Tenant, roots: () => FileRoots): Promise<SumsBase> {
    if (base.startsWith('/'))
      return { type: 'directory', path: await roots().resolveDirectory(base) };
    const remote = remoteSumsBase(base);
    if (remote.type === 's3') allow(tenant, { type: 's3', bucket: remote.bucket, key: '' });
    if (remote.type === 'http') allow(tenant, { type: 'http', url: remote.prefix });
    return remote;
  }

  /** The bytes of an inline list (kept with the batch) or of the object its `ref` names, from an offset. */
  private openList(batch: LeasedBatch, tenant: Tenant): OpenAt {
    if (batch.manifest !== null) {
      const bytes = Buffer.from(batch.manifest, 'utf8');
      return async (offset) => [bytes.subarray(offset)];
    }
    const ref = batch.source.ref as string;
    const spec: SourceSpec = ref.startsWith('/')
      ? { type: 'file', path: ref }
      : (parseRemoteSource(ref, this.remote.guard) as SourceSpec);
    if (spec.type !== 'file') allow(tenant, spec as unknown as SourceRef);
    const sources = tenant.fileRoots
      ? this.sources.withFileRoots(tenantFileRoots(tenant.fileRoots, this.config.fileRoots))
      : this.sources;
    return openSourceAt(sources.create(spec));
  }
}

/** The tenant's file roots (made when first needed: none at all refuses every path). */
function rootsOf(tenant: Tenant, deployment: readonly string[]): () => FileRoots {
  let roots: FileRoots | undefined;
  return () => {
    const allowed = tenantFileRoots(tenant.fileRoots, deployment);
    if (allowed.length === 0)
      throw new SourceError('PATH_OUTSIDE_ROOTS', 'the tenant has no file root inside the roots');
    roots ??= new FileRoots(allowed);
    return roots;
  };
}

/** Throws SOURCE_NOT_ALLOWED when the tenant may not read the remote `source`. */
function allow(tenant: Tenant, source: SourceRef): void {
  const refusal = remoteRefusal(tenant, source);
  if (refusal) throw new SourceError(refusal.code, refusal.message, refusal.details);
}
