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
}
