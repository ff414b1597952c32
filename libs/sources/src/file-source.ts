import { constants, type BigIntStats } from 'node:fs';
import { lstat, open, type FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { FileRoots } from './file-roots.js';
import { fsErrorToSourceError } from './fs-errors.js';
import { SourceError } from './source-error.js';
import { sameVersion, type OpenOptions, type OpenedSource, type Source, type SourceVersion } from './source.js';

const DEFAULT_CHUNK_BYTES = 8 * 1024 * 1024;
// O_NONBLOCK: opening a FIFO must not hang waiting for a writer; it is refused
// right after by the fstat check. It has no effect on regular files.
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

export interface FileSourceSpec {
  type: 'file';
  path: string;
}

/** Identity of a file: a rewrite changes mtime or size, a replacement changes the inode. */
export function fileVersion(stats: BigIntStats): SourceVersion {
  return {
    size: Number(stats.size),
    mtimeMs: Number(stats.mtimeNs / 1000n) / 1000,
    ino: stats.ino.toString(),
  };
}

/** A local file under one of the allowed roots. */
export class FileSource implements Source {
  constructor(
    private readonly path: string,
    private readonly roots: FileRoots,
  ) {}

  async open(offset: number, expected?: SourceVersion | null, options: OpenOptions = {}): Promise<OpenedSource> {
    const real = await this.resolveRegularFile();
    let handle: FileHandle;
    try {
      handle = await open(real, OPEN_FLAGS);
    } catch (err) {
      throw fsErrorToSourceError(err, this.path);
    }
    try {
      const stats = await handle.stat({ bigint: true });
      if (!stats.isFile()) throw this.notRegular();
      const version = fileVersion(stats);
      const size = Number(stats.size);
      if (expected && !sameVersion(expected, version)) {
        throw new SourceError('SOURCE_CHANGED', 'file changed since the last checkpoint', {
          path: this.path,
          expected,
          actual: version,
        });
      }
      if (!Number.isSafeInteger(offset) || offset < 0 || offset > size) {
        throw new SourceError('SOURCE_CHANGED', 'offset is past the end of the file', { path: this.path, offset, size });
      }
      const stream = this.streamFrom(handle, offset, size, options.chunkBytes ?? DEFAULT_CHUNK_BYTES);
      return { stream, version, size };
    } catch (err) {
      await handle.close();
      throw err instanceof SourceError ? err : fsErrorToSourceError(err, this.path);
    }
  }

  async currentVersion(): Promise<SourceVersion> {
    const real = await this.roots.resolve(this.path);
    try {
      return fileVersion(await lstat(real, { bigint: true }));
    } catch (err) {
      throw fsErrorToSourceError(err, this.path);
    }
  }

  private async resolveRegularFile(): Promise<string> {
    const real = await this.roots.resolve(this.path);
    let stats;
    try {
      stats = await lstat(real);
    } catch (err) {
      throw fsErrorToSourceError(err, this.path);
    }
    if (!stats.isFile()) throw this.notRegular();
    return real;
  }

  /** Reads [offset, size) only: bytes appended after the version was taken are not part of it. */
  private streamFrom(handle: FileHandle, offset: number, size: number, chunkBytes: number): Readable {
    if (offset === size) {
      void handle.close();
      return Readable.from([]);
    }
    return handle.createReadStream({ start: offset, end: size - 1, highWaterMark: chunkBytes, autoClose: true });
  }

  private notRegular(): SourceError {
    return new SourceError('NOT_A_REGULAR_FILE', 'not a regular file', { path: this.path });
  }
}
