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
