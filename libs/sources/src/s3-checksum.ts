/**
 * What S3 knows about an object's checksums: its part layout (for the
 * composite / multipart-ETag forms) and the checksum it stores. Read by
 * S3Source.objectLayout() when a job asks for `s3Checksum`; the worker pins it
 * in the job's checkpointed state so a resumed job uses the same parts.
 */

/** The object-level checksum fields of HeadObject, by hashq algorithm name. */
export const S3_STORED_CHECKSUM_FIELDS = {
  crc32: 'ChecksumCRC32',
  crc32c: 'ChecksumCRC32C',
  crc64nvme: 'ChecksumCRC64NVME',
  sha1: 'ChecksumSHA1',
  sha256: 'ChecksumSHA256',
} as const;

export type S3StoredChecksumAlgorithm = keyof typeof S3_STORED_CHECKSUM_FIELDS;

export interface S3ObjectLayout {
  etag: string | null;
  versionId: string | null;
  size: number;
  /** Part sizes in part order; null for an object uploaded in one request (no parts count). */
  partSizes: number[] | null;
  /** The checksums S3 stores for the object, as it returns them (base64, composite ones may end in "-N"). */
  stored: Partial<Record<S3StoredChecksumAlgorithm, string>>;
  /** ChecksumType of the stored checksum, when S3 reports one. */
  storedType: 'FULL_OBJECT' | 'COMPOSITE' | null;
}

/** Part sizes as runs of [size, count]: a 10,000-part object of equal parts is one or two pairs. */
export function packPartSizes(sizes: readonly number[]): Array<[number, number]> {
  const runs: Array<[number, number]> = [];
  for (const size of sizes) {
    const last = runs[runs.length - 1];
    if (last && last[0] === size) last[1] += 1;
    else runs.push([size, 1]);
  }
  return runs;
}

export function unpackPartSizes(runs: ReadonlyArray<readonly [number, number]>): number[] {
  const sizes: number[] = [];
  for (const [size, count] of runs) {
    if (
      !Number.isSafeInteger(size) ||
      size < 0 ||
      !Number.isSafeInteger(count) ||
      count < 1 ||
      sizes.length + count > 10_000
    ) {
      throw new Error('invalid part layout');
    }
    for (let i = 0; i < count; i++) sizes.push(size);
  }
  return sizes;
}

/** An S3 checksum value without its "-<parts>" suffix, and the suffix (null when absent). */
export function splitS3Checksum(value: string): { base: string; parts: number | null } {
  const match = /^(.*?)-(\d+)$/.exec(value);
  return match ? { base: match[1], parts: Number(match[2]) } : { base: value, parts: null };
}

/**
 * Same checksum? The bases must be equal; a part-count suffix is compared
 * when both sides carry one (S3 leaves it off in some answers).
 */
export function sameS3Checksum(a: string, b: string): boolean {
  const x = splitS3Checksum(a);
  const y = splitS3Checksum(b);
  if (x.base !== y.base) return false;
  return x.parts === null || y.parts === null || x.parts === y.parts;
}

/** An ETag without its quotes. */
export function unquoteEtag(etag: string | null | undefined): string | null {
  if (typeof etag !== 'string') return null;
  return etag.replace(/^W\//, '').replace(/^"(.*)"$/, '$1');
}
