import type { ReadableFile } from './descriptor-file';
import type { FileRoots, FileStats } from './file-roots';
import { fsErrorToSourceError } from './fs-errors';
import type { OpenedSource, OpenOptions, Source, SourceVersion } from './source';
import { changedFields, sameVersion } from './source';
import { SourceError } from './source-error';

const DEFAULT_CHUNK_BYTES = 8 * 1024 * 1024;

export interface FileSourceSpec {
  type: 'file';
  path: string;
}

/** Identity of a file: a rewrite changes mtime or size, a replacement changes the inode. */
export function fileVersion(stats: Pick<FileStats, 'size' | 'mtimeNs' | 'ino'>): SourceVersion {
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

  async open(
    offset: number,
    expected?: SourceVersion | null,
    options: OpenOptions = {},
  ): Promise<OpenedSource> {
    const { handle, stats } = await this.roots.openRegularFile(this.path);
    try {
      const version = fileVersion(stats);
      const size = Number(stats.size);
      if (expected && !sameVersion(expected, version)) {
        // Which fields differ, and sizes, but no inode or mtime: an error is shown to the client.
        throw new SourceError('SOURCE_CHANGED', 'file changed since the last checkpoint', {
          path: this.path,
          changed: changedFields(expected, version),
          expected: { size: expected.size },
          actual: { size },
        });
      }
      if (!Number.isSafeInteger(offset) || offset < 0 || offset > size) {
        throw new SourceError('SOURCE_CHANGED', 'offset is past the end of the file', {
          path: this.path,
          offset,
          size,
        });
      }
      let closing: Promise<void> | undefined;
      const close = () => (closing ??= handle.close());
      const chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES;
      const stream = this.readRange(handle, offset, size, chunkBytes, options.onBytes);
      const currentVersion = async () => fileVersion(await handle.stat({ bigint: true }));
      return { stream, version, size, close, currentVersion, fd: handle.fd };
    } catch (err) {
      await handle.close();
      throw err instanceof SourceError ? err : fsErrorToSourceError(err, this.path);
    }
  }

  /** Identity of what the path names now, through the same checked open as `open`. */
  async currentVersion(): Promise<SourceVersion> {
    const { stats } = await this.roots.locateRegularFile(this.path);
    return fileVersion(stats);
  }

  /**
   * Reads [offset, size) only (bytes appended after the version was taken are not
   * part of it) into three buffers used in turn: no allocation per chunk, so
   * multi-GiB reads put no pressure on the garbage collector. A short read (the
   * file shrank) ends the stream early; the caller sees fewer bytes than `size`.
   * The descriptor stays open until `close()`: the end-of-read check fstats it.
   */
  private async *readRange(
    handle: ReadableFile,
    offset: number,
    size: number,
    chunkBytes: number,
    onBytes?: (count: number) => void,
  ): AsyncGenerator<Buffer> {
    const length = Math.min(chunkBytes, size - offset);
    if (length <= 0) return;
    const buffers = [
      Buffer.allocUnsafeSlow(length),
      Buffer.allocUnsafeSlow(length),
      Buffer.allocUnsafeSlow(length),
    ];
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
}
