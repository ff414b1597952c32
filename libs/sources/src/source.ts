/**
 * Identity of the bytes behind a source at one moment. A job records it at its
 * first read and a resumed job must see the same identity again, otherwise the
 * digest would mix two contents. Plain JSON: it is stored in jobs.source_version.
 */
export type SourceVersion = Record<string, string | number | null>;

export interface OpenOptions {
  /** Preferred size of the buffers the stream yields (the worker's chunk size). */
  chunkBytes?: number;
  /** Told the length of every piece as it arrives from the source, before chunking (progress watch). */
  onBytes?: (count: number) => void;
}

export interface OpenedSource {
  /**
   * The bytes from the requested offset to the end. A source may reuse its
   * buffers: a yielded Buffer stays valid until the iterator has been advanced
   * twice more (room for one chunk hashed while the next one is read). A Node
   * Readable satisfies this too.
   */
  stream: AsyncIterable<Buffer>;
  /** Stops reading and releases the source (idempotent). */
  close(): Promise<void>;
  /** Identity of what is being read; equal to the expected one when given. */
  version: SourceVersion;
  /**
   * Identity of what is being read, now, asked of the open source itself (a file: fstat of its
   * descriptor) until `close()`; a source without it is asked again (`Source.currentVersion`).
   */
  currentVersion?(): Promise<SourceVersion>;
  /**
   * A local file's descriptor, the one opened and checked beneath the roots: a reader may read
   * [offset, size) from it directly (pread; the worker hashes it natively) instead of `stream`, until
   * `close()`. Never reopen the file by path.
   */
  fd?: number;
  /** Total length of the source in bytes, when known. */
  size: number | null;
  /**
   * Bytes read and thrown away to reach the offset (an HTTP server that ignored
   * Range sent the whole body again); they count in the job's bytesRead.
   */
  discardedBytes?: number;
}

/**
 * One readable thing a job hashes (a file; later an object or a URL).
 * `open` starts reading AT `offset`, pinned to `expected` when given: a source
 * whose identity differs fails with SOURCE_CHANGED instead of yielding bytes.
 */
export interface Source {
  open(
    offset: number,
    expected?: SourceVersion | null,
    options?: OpenOptions,
  ): Promise<OpenedSource>;
  /** Identity now, without reading the content (used to detect a change during a read). */
  currentVersion(): Promise<SourceVersion>;
}

export function sameVersion(a: SourceVersion, b: SourceVersion): boolean {
  return changedFields(a, b).length === 0;
}

/** Names of the fields of two versions that differ (errors name them; the values may be private). */
export function changedFields(a: SourceVersion, b: SourceVersion): string[] {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((key) => a[key] !== b[key]);
}
