import { constants, type Stats } from 'node:fs';
import { type FileHandle, open, readlink } from 'node:fs/promises';
import { join } from 'node:path';

import { fsErrorToSourceError } from './fs-errors';
import { SourceError } from './source-error';

/**
 * Linux's O_PATH (Node has no constant for it): a descriptor that names a file without opening
 * it, so a FIFO, a socket or a device met on the way is never opened for real.
 */
const O_PATH = 0o10000000;
const STEP_FLAGS = O_PATH | constants.O_NOFOLLOW;
/** The kernel's own limit on symbolic links in one lookup (MAXSYMLINKS). */
const MAX_LINKS = 40;

/** A folder files may be read from: its configured path and its real path (symlinks resolved). */
export interface WalkRoot {
  lexical: string;
  real: string;
}

/** A regular file opened beneath a root, and its real path. */
export interface OpenedBeneath {
  handle: FileHandle;
  path: string;
}

/** The kernel's link to the very file a descriptor holds, whatever was renamed or swapped since. */
export function descriptorLink(handle: FileHandle): string {
  return `/proc/self/fd/${handle.fd}`;
}

export function isWithin(root: string, candidate: string): boolean {
  if (candidate === root) return true;
  return candidate.startsWith(root.endsWith('/') ? root : `${root}/`);
}

/**
 * Where a walk of the absolute `path` starts: the first root holding it (by its real path, else
 * its configured one) and the names below that root; undefined when no root holds it.
 */
export function walkStart(
  roots: readonly WalkRoot[],
  path: string,
): { root: WalkRoot; names: string[] } | undefined {
  for (const root of roots) {
    const base = isWithin(root.real, path)
      ? root.real
      : isWithin(root.lexical, path)
        ? root.lexical
        : undefined;
    if (base === undefined) continue;
    const names = path
      .slice(base.length)
      .split('/')
      .filter((name) => name !== '' && name !== '.');
    return { root, names };
  }
  return undefined;
}

/**
 * Opens the regular file at the absolute path `path` beneath one of `roots`, resolving it as the
 * kernel would but one name at a time: each name is looked up in its parent's directory descriptor
 * ("/proc/self/fd/<dir>/<name>": Node has no openat) with O_PATH | O_NOFOLLOW. A symbolic link is
 * read, never followed by the kernel: its target is walked the same way, from the link's folder or,
 * when absolute, from the root it names. A target outside every root, or a `..` above a root, is
 * refused before anything outside is looked up, so a directory swapped with a symlink during the walk
 * cannot lead out, and no errno of an outside path reaches the caller. `requested` names the job's
 * path in errors. With `want` = 'directory' the path must name a directory (a root itself
 * included), and `handle` is an O_PATH descriptor of it (it names the folder, it cannot read it).
 */
export async function openBeneath(
  roots: readonly WalkRoot[],
  path: string,
  requested: string,
  want: 'file' | 'directory' = 'file',
): Promise<OpenedBeneath> {
  const walk = new Walk(roots, requested, want);
  try {
    return await walk.open(path);
  } catch (err) {
    throw err instanceof SourceError ? err : fsErrorToSourceError(err, requested);
  } finally {
    await walk.close();
  }
}

class Walk {
  private root: WalkRoot | undefined;
  /** The root's directory, then each folder entered below it. */
  private dirs: FileHandle[] = [];
  /** Names of the folders entered below the root. */
  private names: string[] = [];
  private links = 0;

  constructor(
    private readonly roots: readonly WalkRoot[],
    private readonly requested: string,
    private readonly want: 'file' | 'directory',
  ) {}

  async open(path: string): Promise<OpenedBeneath> {
    const pending = await this.enter(path);
    for (let name = pending.shift(); name !== undefined; name = pending.shift()) {
      if (name === '..') {
        await this.leave();
        continue;
      }
      const { step, stats } = await this.lookUp(name);
      if (stats.isSymbolicLink()) {
        await step.close();
        pending.unshift(...(await this.follow(name)));
      } else if (pending.length === 0 && this.want === 'file') {
        return await this.reopenFile(step, stats.isFile(), name);
      } else {
        this.dirs.push(step); // closed with the walk, a folder or not
        this.names.push(name);
        if (!stats.isDirectory())
          throw new SourceError('SOURCE_NOT_FOUND', 'file does not exist', this.details);
      }
    }
    if (this.want === 'file') throw this.notRegular(); // the root itself
    // The folder reached: kept open for the caller (close() must not close it).
    const handle = this.dirs.pop()!;
    const names = this.names.splice(0);
    return { handle, path: join(this.root!.real, ...names) };
  }

  async close(): Promise<void> {
    await Promise.all(this.dirs.map((dir) => dir.close()));
    this.dirs = [];
    this.names = [];
  }

  /** Starts again at the root that holds `path` (absolute); returns the names left to walk. */
  private async enter(path: string): Promise<string[]> {
    const start = walkStart(this.roots, path);
    if (!start) throw this.outside('file path is outside the allowed roots');
    await this.close();
    this.root = start.root;
    this.dirs.push(await open(start.root.real, O_PATH | constants.O_DIRECTORY)); // the operator's path: followed
    return start.names;
  }

  private async leave(): Promise<void> {
    if (this.dirs.length === 1) throw this.outside('file path is outside the allowed roots');
    await this.dirs.pop()!.close();
    this.names.pop();
  }

  /**
   * The names a symbolic link stands for, from its folder or from the root its absolute target names.
   * A link replaced since it was seen (EINVAL: no longer a link) is looked up again, as one more link.
   */
  private async follow(name: string): Promise<string[]> {
    if (++this.links > MAX_LINKS) throw this.outside('too many symbolic links');
    let target: string;
    try {
      target = await readlink(`${descriptorLink(this.current)}/${name}`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EINVAL') return [name];
      throw err;
    }
    if (target.startsWith('/')) return this.enter(target);
    return target.split('/').filter((part) => part !== '' && part !== '.');
  }

  /** Reopening through the descriptor's link opens the same inode, now known to be a regular file. */
  private async reopenFile(
    step: FileHandle,
    regular: boolean,
    name: string,
  ): Promise<OpenedBeneath> {
    try {
      if (!regular) throw this.notRegular();
      const handle = await open(descriptorLink(step), constants.O_RDONLY);
      return { handle, path: join(this.root!.real, ...this.names, name) };
    } finally {
      await step.close();
    }
  }

  /** `name` in the current folder, as an O_PATH descriptor, and what it is. */
  private async lookUp(name: string): Promise<{ step: FileHandle; stats: Stats }> {
    const step = await open(`${descriptorLink(this.current)}/${name}`, STEP_FLAGS);
    try {
      return { step, stats: await step.stat() };
    } catch (err) {
      await step.close();
      throw err;
    }
  }

  private get current(): FileHandle {
    return this.dirs[this.dirs.length - 1];
  }

  private get details(): Record<string, unknown> {
    return { path: this.requested };
  }

  private outside(message: string): SourceError {
    return new SourceError('PATH_OUTSIDE_ROOTS', message, this.details);
  }

  private notRegular(): SourceError {
    return new SourceError('NOT_A_REGULAR_FILE', 'not a regular file', this.details);
  }
}
