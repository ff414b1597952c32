/** Hashing options of a job, as stored in jobs.options. */
export interface JobOptions {
  /** Output length in bytes for XOFs (e.g. shake256). */
  outputLength?: number;
  /** Customization string of a customizable algorithm (cSHAKE), hex-encoded. */
  customization?: string;
  /** Digests to verify, lower-case hex per algorithm; a mismatch fails the job with DIGEST_MISMATCH. */
  expected?: Record<string, string>;
  /** BullMQ priority (1 runs first). */
  priority?: number;
  /**
   * S3 sources only: also report each S3-supported digest in S3's own form for the object
   * (multipart: the composite/ETag form over the object's parts) and compare it with the
   * checksum S3 stores; a mismatch fails the job with S3_CHECKSUM_MISMATCH.
   */
  s3Checksum?: boolean;
}

/** Algorithms S3 knows a checksum form for (md5: the ETag form). */
export const S3_CHECKSUM_ALGORITHMS: readonly string[] = ['crc32', 'crc32c', 'crc64nvme', 'sha1', 'sha256', 'md5'];

/** S3's checksum types; for md5 (the ETag), COMPOSITE means the multipart ETag form. */
export type S3ChecksumType = 'FULL_OBJECT' | 'COMPOSITE';

/** One digest in S3's form, as stored next to the digest (jobs.digests[algorithm].s3). */
export interface S3ChecksumValue {
  /** base64 (md5: hex) of the digest, with "-<parts>" for the composite form. */
  value: string;
  type: S3ChecksumType;
  /** Part count of a multipart object; null for an object uploaded in one request. */
  parts: number | null;
  /** true: equal to the value S3 stores (md5: the ETag); false: different (the job failed); null: nothing to compare with. */
  verified: boolean | null;
  /** The value S3 stores for this algorithm (md5: the ETag), when it has one. */
  stored?: string;
}

/** A normalized source, as stored in jobs.source. */
export interface FileSourceRef {
  type: 'file';
  /** Absolute real path (symlinks resolved) inside one of HASHQ_FILE_ROOTS. */
  path: string;
}

/** A URL read with ranged GETs (see @hashq/sources HttpSource). */
export interface HttpSourceRef {
  type: 'http';
  url: string;
  headers?: Record<string, string>;
}

/** An object in S3-compatible storage (see @hashq/sources S3Source). */
export interface S3SourceRef {
  type: 's3';
  bucket: string;
  key: string;
  versionId?: string;
}

export type SourceRef = FileSourceRef | HttpSourceRef | S3SourceRef;

/** One digest as stored in jobs.digests and returned by the API. */
export interface DigestValue {
  hex: string;
  base64: string;
  /** With the job option s3Checksum: the value in S3's form (the API shows it as `s3Checksum`). */
  s3?: S3ChecksumValue;
}
