import { type BigIntStats, realpathSync } from 'node:fs';
import { type FileHandle, readlink } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';

import { fsErrorToSourceError } from './fs-errors';
import { descriptorLink, isWithin, openBeneath, type WalkRoot } from './open-beneath';
import { SourceError } from './source-error';

/** A regular file opened beneath a root; the caller closes `handle`. */
export interface RootedFile {
  handle: FileHandle;
  /** Its real path (symlinks inside the roots resolved): what a job stores. */
  path: string;
  /** fstat of the descriptor. */
  stats: BigIntStats;
}

function realOrLexical(root: string): string {
  try {
    return realpathSync(root);
  } catch {
    return root; // a root that does not exist yet holds no file: harmless
  }
}

/**
 * The folders files may be read from (HASHQ_FILE_ROOTS). A path is accepted
 * only when its lexical form, every step of its resolution (symlinks
 * included) and the file actually opened lie inside a root, so neither `..`
 * nor a symlink, not even one swapped in during the check, can lead out.
 */
export class FileRoots {
  private readonly roots: WalkRoot[];

  constructor(roots: readonly string[]) {
    if (roots.length === 0) throw new Error('FileRoots: at least one root is required');
    for (const root of roots) {
      if (!isAbsolute(root)) throw new Error(`FileRoots: root must be absolute: ${root}`);
    }
    this.roots = roots.map((root) => ({
      lexical: resolve(root),
      real: realOrLexical(resolve(root)),
    }));
  }

  /** Parses a comma-separated list such as HASHQ_FILE_ROOTS. */
  static parse(list: string): FileRoots {
    return new FileRoots(
      list
        .split(',')
        .map((entry) => entry.trim())
        .filter((entry) => entry.length > 0),
    );
  }

  get paths(): readonly string[] {
    return this.roots.map((root) => root.lexical);
  }

  /**
   * Opens `requested` once and proves that the descriptor is a regular file beneath a root; every
   * later check of the file uses that descriptor, never the path again. The path is resolved one
   * name at a time from a root's directory, symlinks included (openBeneath: a symlink that stays
   * inside a root is accepted, one that leads out is refused without anything outside being looked
   * up), and the kernel's own name of the opened file must still lie inside a root (a directory
   * moved out meanwhile). Refusals carry only the requested path.
   */
  async openRegularFile(requested: string): Promise<RootedFile> {
    const { handle, path } = await openBeneath(
      this.roots,
      this.lexicalPathOf(requested),
      requested,
    );
    try {
      const kernelPath = await readlink(descriptorLink(handle));
      if (!this.roots.some((root) => isWithin(root.real, kernelPath)))
        throw this.outside(requested);
      return { handle, path, stats: await handle.stat({ bigint: true }) };
    } catch (err) {
      await handle.close();
      throw err instanceof SourceError ? err : fsErrorToSourceError(err, requested);
    }
  }

  /**
   * The real path of the directory `requested`, resolved as openRegularFile resolves a file (one
   * name at a time beneath a root, symlinks inside the roots only, the kernel's own name checked):
   * what a directory batch lists from. Refusals carry only the requested path.
   */
  async resolveDirectory(requested: string): Promise<string> {
    const { handle, path } = await openBeneath(
      this.roots,
      this.lexicalPathOf(requested),
      requested,
      'directory',
    );
    try {
      const kernelPath = await readlink(descriptorLink(handle));
      if (!this.roots.some((root) => isWithin(root.real, kernelPath)))
        throw this.outside(requested);
      return path;
    } catch (err) {
      throw err instanceof SourceError ? err : fsErrorToSourceError(err, requested);
    } finally {
      await handle.close();
    }
  }

  /** `requested` normalized, or a SourceError when it is relative, holds `..` or lies outside every root. */
  private lexicalPathOf(requested: string): string {
    if (!isAbsolute(requested) || requested.includes('\0')) {
      throw new SourceError('PATH_OUTSIDE_ROOTS', 'file path must be absolute', {
        path: requested,
      });
    }
    if (requested.split(/[\\/]/).includes('..')) {
      throw new SourceError('PATH_OUTSIDE_ROOTS', 'file path must not contain ".."', {
        path: requested,
      });
    }
    const lexical = resolve(requested);
    if (!this.roots.some((root) => isWithin(root.lexical, lexical))) throw this.outside(requested);
    return lexical;
  }

  private outside(path: string): SourceError {
    return new SourceError('PATH_OUTSIDE_ROOTS', 'file path is outside the allowed roots', {
      path,
    });
  }
}
