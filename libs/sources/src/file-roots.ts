import { realpathSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { isAbsolute, resolve, sep } from 'node:path';
import { SourceError } from './source-error.js';
import { fsErrorToSourceError } from './fs-errors.js';

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
 * only when both its lexical form and its real path (symlinks followed) lie
 * inside a root, so neither `..` nor a symlink can lead out.
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

  /** The real path of `requested`, or a SourceError saying why it is refused. */
  async resolve(requested: string): Promise<string> {
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
    if (!this.real.some((root) => isWithin(root, real))) {
      throw this.outside(requested);
    }
    return real;
  }

  private outside(path: string): SourceError {
    return new SourceError('PATH_OUTSIDE_ROOTS', 'file path is outside the allowed roots', {
      path,
      roots: this.lexical,
    });
  }
}
