import { realpathSync, type BigIntStats } from 'node:fs';
import { readlink, realpath, type FileHandle } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { SourceError } from './source-error.js';
import { fsErrorToSourceError } from './fs-errors.js';
import { descriptorLink, openBeneath } from './open-beneath.js';

/** A regular file opened beneath a root; the caller closes `handle`. */
export interface RootedFile {
  handle: FileHandle;
  /** Its real path (symlinks inside the roots resolved): what a job stores. */
  path: string;
  /** fstat of the descriptor. */
  stats: BigIntStats;
}

function isWithin(root: string, candidate: string): boolean {
  if (candidate === root) return true;
  return candidate.startsWith(root.endsWith(sep) ? root : root + sep);
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
 * only when its lexical form, its real path (symlinks followed) and the file
 * actually opened all lie inside a root, so neither `..` nor a symlink, not
 * even one swapped in during the check, can lead out.
 */
export class FileRoots {
  private readonly lexical: string[];
  private readonly real: string[];

  constructor(roots: readonly string[]) {
    if (roots.length === 0) throw new Error('FileRoots: at least one root is required');
    for (const root of roots) {
      if (!isAbsolute(root)) throw new Error(`FileRoots: root must be absolute: ${root}`);
    }
    this.lexical = roots.map((root) => resolve(root));
    this.real = this.lexical.map(realOrLexical);
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
    return this.lexical;
  }

  /**
   * Opens `requested` once and proves that the descriptor is a regular file beneath a root; every
   * later check of the file uses that descriptor, never the path again. Symlinks inside the roots
   * are resolved first (realpath), then the real path is opened from its root one name at a time
   * with no symlink followed (openBeneath), and the kernel's own name of the opened file must still
   * lie inside a root (a directory moved out meanwhile). Refusals carry only the requested path.
   */
  async openRegularFile(requested: string): Promise<RootedFile> {
    const { root, real } = await this.realPathOf(requested);
    const handle = await openBeneath(root, relative(root, real), requested);
    try {
      if (!this.holds(await readlink(descriptorLink(handle)))) throw this.outside(requested);
      return { handle, path: real, stats: await handle.stat({ bigint: true }) };
    } catch (err) {
      await handle.close();
      throw err instanceof SourceError ? err : fsErrorToSourceError(err, requested);
    }
  }

  /** The real path of `requested` and the real root it lies in, or a SourceError saying why it is refused. */
  private async realPathOf(requested: string): Promise<{ root: string; real: string }> {
    if (!isAbsolute(requested) || requested.includes('\0')) {
      throw new SourceError('PATH_OUTSIDE_ROOTS', 'file path must be absolute', { path: requested });
    }
    if (requested.split(/[\\/]/).includes('..')) {
      throw new SourceError('PATH_OUTSIDE_ROOTS', 'file path must not contain ".."', { path: requested });
    }
    const lexical = resolve(requested);
    if (!this.lexical.some((root) => isWithin(root, lexical))) {
      throw this.outside(requested);
    }
    let real: string;
    try {
      real = await realpath(lexical);
    } catch (err) {
      throw fsErrorToSourceError(err, requested);
    }
    const root = this.real.find((candidate) => isWithin(candidate, real));
    if (root === undefined) throw this.outside(requested);
    return { root, real };
  }

  private holds(path: string): boolean {
    return this.real.some((root) => isWithin(root, path));
  }

  private outside(path: string): SourceError {
    return new SourceError('PATH_OUTSIDE_ROOTS', 'file path is outside the allowed roots', { path });
  }
}
