import { constants, type BigIntStats } from 'node:fs';
import { lstat, open, type FileHandle } from 'node:fs/promises';
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
      let closing: Promise<void> | undefined;
      const close = () => (closing ??= handle.close());
      const chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES;
      const stream = this.chunksFrom(handle, close, offset, size, chunkBytes, options.onBytes);
      return { stream, version, size, close };
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

  /**
   * Reads [offset, size) only (bytes appended after the version was taken are not
   * part of it) into three buffers used in turn: no allocation per chunk, so
   * multi-GiB reads put no pressure on the garbage collector. A short read (the
   * file shrank) ends the stream early; the caller sees fewer bytes than `size`.
   */
  private async *chunksFrom(
    handle: FileHandle,
    close: () => Promise<void>,
    offset: number,
    size: number,
    chunkBytes: number,
    onBytes?: (count: number) => void,
  ): AsyncGenerator<Buffer> {
    try {
      yield* this.readRange(handle, offset, size, chunkBytes, onBytes);
    } finally {
      await close();
    }
  }

  private async *readRange(
    handle: FileHandle,
    offset: number,
    size: number,
    chunkBytes: number,
    onBytes?: (count: number) => void,
  ): AsyncGenerator<Buffer> {
    const length = Math.min(chunkBytes, size - offset);
    if (length <= 0) return;
    const buffers = [Buffer.allocUnsafeSlow(length), Buffer.allocUnsafeSlow(length), Buffer.allocUnsafeSlow(length)];
    for (let position = offset, turn = 0; position < size; turn++) {
      const buffer = buffers[turn % buffers.length];
      const wanted = Math.min(length, size - position);
      let filled = 0;
      while (filled < wanted) {
        const { bytesRead } = await handle.read(buffer, filled, wanted - filled, position + filled);
        if (bytesRead === 0) break;
        onBytes?.(bytesRead);
        filled += bytesRead;
      }
      if (filled === 0) return;
      position += filled;
      yield buffer.subarray(0, filled);
      if (filled < wanted) return;
    }
  }

  private notRegular(): SourceError {
    return new SourceError('NOT_A_REGULAR_FILE', 'not a regular file', { path: this.path });
  }
}
