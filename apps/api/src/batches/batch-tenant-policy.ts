import type { BatchSource } from '@hashq/batches/batches.repository';
import type { SourceRef } from '@hashq/jobs';
import { Injectable } from '@nestjs/common';

import { realOrLexical, TenantPolicy } from '../jobs/tenant-policy';
import { type InlineHashing, inlineListItems } from './inline-lists';

/**
 * A tenant's settings applied to a batch before anything is created (docs/tenants.md): the
 * directory, the SUM file's base and a referenced list beneath its file_roots (real paths), an s3
 * bucket among its allowed_buckets, a URL's host among its allowed_hosts, and every item of an
 * inline manifest or SUM file likewise. The rules are TenantPolicy's (the same as for a job); the
 * worker applies them again to what it lists (a referenced list is read only then).
 */
@Injectable()
export class BatchTenantPolicy {
  constructor(private readonly policy: TenantPolicy) {}

  async check(
    tenantId: string,
    source: BatchSource,
    manifest: string | undefined,
    hashing: InlineHashing,
  ): Promise<void> {
    const bases: SourceRef[] = [];
    if (source.type === 'directory') bases.push(fileRef(source.path as string));
    if (source.type === 's3') bases.push({ type: 's3', bucket: source.bucket as string, key: '' });
    if (typeof source.base === 'string') bases.push(addressRef(source.base));
    if (typeof source.ref === 'string') bases.push(addressRef(source.ref));
    for (const base of bases) await this.policy.checkSource(tenantId, base);
    if (manifest === undefined) return;
    for (const item of await inlineListItems(source, manifest, hashing)) {
      const ref = item.source as SourceRef;
      await this.policy.checkSource(tenantId, ref.type === 'file' ? fileRef(ref.path) : ref);
    }
  }
}

function fileRef(path: string): SourceRef {
  return { type: 'file', path: realOrLexical(path) };
}

/** A path, an s3:// URI or an http(s) URL (already checked by BatchSourceResolver). */
function addressRef(address: string): SourceRef {
  if (address.startsWith('/')) return fileRef(address);
  const s3 = /^s3:\/\/([^/]+)\/?(.*)$/i.exec(address);
  if (s3) return { type: 's3', bucket: s3[1], key: s3[2] };
  return { type: 'http', url: address };
}
