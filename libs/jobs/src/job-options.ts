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
export const S3_CHECKSUM_ALGORITHMS: readonly string[] = [
  'crc32',
  'crc32c',
  'crc64nvme',
  'sha1',
  'sha256',
  'md5',
];
