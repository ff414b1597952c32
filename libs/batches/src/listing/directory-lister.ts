import type { Dirent } from 'node:fs';
import { lstatSync } from 'node:fs';
import { readdir } from 'node:fs/promises';

import { FileRoots, SourceError } from '@hashq/sources';
import { fsErrorToSourceError } from '@hashq/sources/fs-errors';

import { Glob } from './glob';
import { LiveIterator } from './live-iterator';
import type { ListedItem, Lister, ListPage } from './types';

export interface DirectoryListerOptions {
  /** HASHQ_FILE_ROOTS: the directory and every file listed must lie inside one of them. */
  roots: FileRoots;
  /** Absolute path of the directory to list. */
  path: string;
  /** Walk subdirectories too (default true). */
  recursive?: boolean;
  /** Only files whose relative path matches this glob (see Glob). */
  include?: string;
  /** lstat every regular file for its size (default true). */
  sizes?: boolean;
  /** Told about every entry not listed, and why (the listing goes on). */
  onSkipped?: (name: string, reason: SkipReason) => void;
}

/**
 * Why an entry was not listed: a symbolic link that does not resolve to a regular file inside the
 * roots (PATH_OUTSIDE_ROOTS, NOT_A_REGULAR_FILE, SOURCE_NOT_FOUND: links are never followed into
 * directories, so no cycle), a FIFO, socket or device (NOT_A_REGULAR_FILE), a name that is not
 * UTF-8 (NAME_NOT_UTF8: no job could name the file), or an unreadable subdirectory.
 */
export type SkipReason = SourceError['code'] | 'NAME_NOT_UTF8';

/** Files handed on at once (the walk yields chunks, not single items). */
const CHUNK = 512;

/**
 * Lists the regular files under a directory inside the file roots, in a fixed order: depth first,
 * each folder's entries sorted by the bytes of their names. Because of that order the cursor is
 * simply the relative path of the last file returned: a resumed walk reads only the folders along
 * that path and skips every name at or before it, so nothing is listed twice or missed, and memory
 * holds one folder's names per depth level, never the whole listing.
 *
 * Items name the real path of the file: the directory's real path plus the names below it, or for
 * a symbolic link, its target as FileRoots resolves it (kept only when it is a regular file inside
 * the roots). The job that hashes an item opens it through FileRoots again, so a folder swapped for
 * a link after the listing still cannot lead outside.
 */
export class DirectoryLister implements Lister {
  private readonly recursive: boolean;
  private readonly include: Glob | null;
  private readonly sizes: boolean;
  private base: Promise<string> | undefined;
  private readonly live = new LiveIterator<ListedItem>(
    (cursor) => this.walk(cursor),
    (item) => item.name,
  );

  constructor(private readonly options: DirectoryListerOptions) {
    this.recursive = options.recursive ?? true;
    this.include = options.include === undefined ? null : new Glob(options.include);
    this.sizes = options.sizes ?? true;
  }

  page(cursor: string | null, max: number): Promise<ListPage> {
    return this.live.page(cursor, max);
  }

  /** The directory's real path, checked to be a directory inside the roots (SourceError if not). */
  realBase(): Promise<string> {
    this.base ??= this.options.roots.resolveDirectory(this.options.path);
    return this.base;
  }

  private async *walk(cursor: string | null): AsyncGenerator<ListedItem[]> {
    const base = await this.realBase();
    const after = cursor === null ? null : cursor.split('/').map(toLatin1);
    yield* this.walkFolder(base, '', after);
  }

  /**
   * Names are read as latin1 strings (one char per byte), so sorting them with `<` sorts by bytes
   * and a name that is not UTF-8 is still seen exactly; they are decoded to UTF-8 when listed.
   * `after`: the cursor's names from this depth down (latin1), null when every entry comes after it.
   * Yields the files in chunks (a per-item async step costs more than the listing itself).
   */
  private async *walkFolder(
    real: string,
    prefix: string,
    after: string[] | null,
  ): AsyncGenerator<ListedItem[]> {
    let entries: Dirent<string>[];
    try {
      entries = await readdir(real, { withFileTypes: true, encoding: 'latin1' });
    } catch (err) {
      if (prefix === '') throw fsErrorToSourceError(err, this.options.path);
      this.skip(prefix.slice(0, -1), fsErrorToSourceError(err, real).code); // vanished or unreadable
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    let i = 0;
    if (after !== null) {
      while (i < entries.length && entries[i].name < after[0]) i++;
    }
    let files: ListedItem[] = [];
    for (; i < entries.length; i++) {
      const entry = entries[i];
      // At the cursor's own name: that file was listed (or a file replaced the cursor's folder).
      const atCursor = after !== null && entry.name === after[0];
      if (!entry.isDirectory()) {
        const found = atCursor ? null : this.fileItem(real, prefix, entry);
        const item = found instanceof Promise ? await found : found; // only links need a wait
        if (item) files.push(item);
        if (files.length >= CHUNK) {
          yield files;
          files = [];
        }
        continue;
      }
      if (!this.recursive) continue;
      const name = fromLatin1(entry.name);
      if (name === null) {
        this.skip(prefix + Buffer.from(entry.name, 'latin1').toString('utf8'), 'NAME_NOT_UTF8');
        continue;
      }
      if (files.length > 0) yield files;
      files = [];
      // Inside the cursor's own folder only the names after the rest of the cursor are new.
      const below = atCursor ? after.slice(1) : [];
      yield* this.walkFolder(
        `${real}/${name}`,
        `${prefix}${name}/`,
        below.length > 0 ? below : null,
      );
    }
    if (files.length > 0) yield files;
  }

  /** The item of the non-folder `entry` when it is a file to list (null when skipped). */
  private fileItem(
    real: string,
    prefix: string,
    entry: Dirent<string>,
  ): ListedItem | null | Promise<ListedItem | null> {
    const name = fromLatin1(entry.name);
    const relative = prefix + (name ?? Buffer.from(entry.name, 'latin1').toString('utf8'));
    if (this.include && !this.include.matches(relative)) return null;
    if (name === null) return this.skip(relative, 'NAME_NOT_UTF8');
    const path = `${real}/${name}`;
    if (entry.isFile()) {
      if (!this.sizes) return { name: relative, source: { type: 'file', path } };
      // Synchronous: one lstat costs a few microseconds, a promise round trip on the pool far more.
      const stats = lstatSync(path, { throwIfNoEntry: false });
      if (stats === undefined) return this.skip(relative, 'SOURCE_NOT_FOUND'); // removed meanwhile
      if (!stats.isFile()) return this.skip(relative, 'NOT_A_REGULAR_FILE');
      return { name: relative, source: { type: 'file', path }, size: stats.size };
    }
    if (entry.isSymbolicLink()) return this.linkItem(relative, path);
    return this.skip(relative, 'NOT_A_REGULAR_FILE');
  }

  /** A symbolic link counts as the regular file it resolves to inside the roots. */
  private async linkItem(relative: string, path: string): Promise<ListedItem | null> {
    try {
      const file = await this.options.roots.locateRegularFile(path);
      return {
        name: relative,
        source: { type: 'file', path: file.path },
        ...(this.sizes ? { size: Number(file.stats.size) } : {}),
      };
    } catch (err) {
      if (err instanceof SourceError) return this.skip(relative, err.code);
      throw err;
    }
  }

  private skip(name: string, reason: SkipReason): null {
    this.options.onSkipped?.(name, reason);
    return null;
  }
}

function toLatin1(name: string): string {
  return Buffer.from(name, 'utf8').toString('latin1');
}

/** The UTF-8 name a latin1-read name stands for, or null when its bytes are not UTF-8. */
function fromLatin1(name: string): string | null {
  // eslint-disable-next-line no-control-regex
  if (!/[^\x00-\x7f]/.test(name)) return name; // ASCII: the same either way
  const bytes = Buffer.from(name, 'latin1');
  const decoded = bytes.toString('utf8');
  return Buffer.from(decoded, 'utf8').equals(bytes) ? decoded : null;
}
