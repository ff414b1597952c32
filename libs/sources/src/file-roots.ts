import { type BigIntStats, realpathSync } from 'node:fs';
import { readlink } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';

import { openBeneath as openNatively, type OpenBeneathResult } from '@hashq/native';

import { DescriptorFile, type ReadableFile } from './descriptor-file';
import { fsErrorToSourceError } from './fs-errors';
import { descriptorLink, isWithin, openBeneath, type WalkRoot, walkStart } from './open-beneath';
import { SourceError } from './source-error';

/** What the sources use of a file's fstat (BigIntStats has it too). */
export type FileStats = Pick<BigIntStats, 'size' | 'mtimeNs' | 'dev' | 'ino' | 'mode'>;

/** A regular file located beneath a root. */
export interface LocatedFile {
  /** Its real path (symlinks inside the roots resolved): what a job stores. */
  path: string;
  /** fstat of the descriptor. */
  stats: FileStats;
}

/** A regular file opened beneath a root; the caller closes `handle`. */
export interface RootedFile extends LocatedFile {
  handle: ReadableFile;
}

function statsOf({ size, mtimeNs, dev, ino, mode }: OpenBeneathResult): FileStats {
  return { size, mtimeNs, dev, ino, mode };
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
  /** false once the native open said this system lacks openat2 or /proc: the walk alone then. */
  private native: boolean;

  /** `options.native` false: the JS walk alone (tests compare the two paths). */
  constructor(roots: readonly string[], options: { native?: boolean } = {}) {
    this.native = options.native ?? true;
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
   *
   * The native open (one pool task, openat2 RESOLVE_BENEATH) answers first; whatever it cannot
   * settle exactly as the walk would (a `..` or an absolute symlink, a refusal the walk words
   * itself, a system without openat2) is left to the walk, the authority.
   */
  async openRegularFile(requested: string): Promise<RootedFile> {
    const lexical = this.lexicalPathOf(requested);
    const fast = await this.openFast(lexical, requested, true);
    if (fast) return { handle: new DescriptorFile(fast.fd), path: fast.path, stats: statsOf(fast) };
    return this.walkToFile(lexical, requested);
  }

  /**
   * The real path and fstat of the regular file `requested`, checked exactly as openRegularFile
   * checks it, the file closed again: for callers that store its name and size only.
   */
  async locateRegularFile(requested: string): Promise<LocatedFile> {
    const lexical = this.lexicalPathOf(requested);
    const fast = await this.openFast(lexical, requested, false);
    if (fast) return { path: fast.path, stats: statsOf(fast) };
    const { handle, path, stats } = await this.walkToFile(lexical, requested);
    await handle.close();
    return { path, stats };
  }

  /**
   * The native open beneath the root the walk would start from: its answer, a refusal that is
   * final (missing, not a regular file), or undefined to leave the path to the walk. A file opened
   * whose kernel name is not a plain path inside a root (moved out, deleted, not UTF-8) is closed
   * and left to the walk too.
   */
  private async openFast(
    lexical: string,
    requested: string,
    keepOpen: boolean,
  ): Promise<OpenBeneathResult | undefined> {
    if (!this.native) return undefined;
    const start = walkStart(this.roots, lexical); // the root the walk would start from
    if (!start) return undefined;
    const opened = await openNatively(start.root.real, start.names.join('/'), { keepOpen });
    switch (opened.status) {
      case 'OK':
        if (
          this.roots.some((root) => isWithin(root.real, opened.path)) &&
          !opened.path.endsWith(' (deleted)') &&
          !opened.path.includes('\uFFFD')
        )
          return opened;
        if (opened.fd >= 0) await new DescriptorFile(opened.fd).close();
        return undefined;
      case 'NOT_FOUND':
        // The walk looks names up one at a time: a path too long as a whole may still resolve.
        if (opened.errno === 'ENAMETOOLONG') return undefined;
        throw fsErrorToSourceError({ code: opened.errno }, requested);
      case 'NOT_REGULAR':
        throw new SourceError('NOT_A_REGULAR_FILE', 'not a regular file', { path: requested });
      case 'UNSUPPORTED':
        this.native = false;
        return undefined;
      default:
        // OUTSIDE: the walk follows absolute links into a root and words the refusal. FORBIDDEN:
        // the kernel may refuse to follow a link (protected_symlinks) the walk reads as text.
        // READ_FAILED: the walk's own errno message.
        return undefined;
    }
  }

  /** The JS walk (openBeneath), then the kernel's name of the opened file checked. */
  private async walkToFile(lexical: string, requested: string): Promise<RootedFile> {
    const { handle, path } = await openBeneath(this.roots, lexical, requested);
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
