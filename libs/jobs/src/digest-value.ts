/** One digest as stored in jobs.digests and returned by the API. */
export interface DigestValue {
  hex: string;
  base64: string;
  /** With the job option s3Checksum: the value in S3's form (the API shows it as `s3Checksum`). */
  s3?: S3ChecksumValue;
}

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
