import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { fsErrorToSourceError } from './fs-errors.js';
import { SourceError } from './source-error.js';

/**
 * Linux's O_PATH (Node has no constant for it): a descriptor that names a file without opening
 * it, so a FIFO, a socket or a device met on the way is never opened for real.
 */
const O_PATH = 0o10000000;
const STEP_FLAGS = O_PATH | constants.O_NOFOLLOW;

/** The kernel's link to the very file a descriptor holds, whatever was renamed or swapped since. */
export function descriptorLink(handle: FileHandle): string {
  return `/proc/self/fd/${handle.fd}`;
}

/**
 * Opens the regular file `relative` (a path without symlinks, `.` or `..`, as realpath gives)
 * beneath the directory `root`, one name at a time: each name is looked up in the descriptor of
 * its parent ("/proc/self/fd/<dir>/<name>" does what openat does, which Node lacks) and refused if
 * it is a symbolic link. A directory swapped with a symlink after the path was checked is refused,
 * never crossed, and nothing outside `root` is opened. `requested` only names the job's path in errors.
 */
export async function openBeneath(root: string, relative: string, requested: string): Promise<FileHandle> {
  const names = relative === '' ? [] : relative.split('/');
  if (names.some((name) => name === '' || name === '.' || name === '..')) {
    throw new SourceError('PATH_OUTSIDE_ROOTS', 'file path must be canonical', { path: requested });
  }
  let step: FileHandle;
  try {
    step = await open(root, STEP_FLAGS | constants.O_DIRECTORY);
  } catch (err) {
    throw fsErrorToSourceError(err, requested);
  }
  try {
    for (const [index, name] of names.entries()) {
      const next = await open(`${descriptorLink(step)}/${name}`, STEP_FLAGS);
      await step.close();
      step = next;
      await assertKind(step, index === names.length - 1 ? 'file' : 'directory', requested);
    }
    if (names.length === 0) throw notRegular(requested);
    // Reopening through the magic link opens the same inode, now checked to be a regular file.
    return await open(descriptorLink(step), constants.O_RDONLY);
  } catch (err) {
    throw err instanceof SourceError ? err : fsErrorToSourceError(err, requested);
  } finally {
    await step.close();
  }
}

async function assertKind(step: FileHandle, kind: 'file' | 'directory', requested: string): Promise<void> {
  const stats = await step.stat();
  if (stats.isSymbolicLink()) throw new SourceError('PATH_OUTSIDE_ROOTS', 'symbolic link refused', { path: requested });
  if (kind === 'directory' && !stats.isDirectory()) {
    throw new SourceError('SOURCE_NOT_FOUND', 'file does not exist', { path: requested });
  }
  if (kind === 'file' && !stats.isFile()) throw notRegular(requested);
}

function notRegular(requested: string): SourceError {
  return new SourceError('NOT_A_REGULAR_FILE', 'not a regular file', { path: requested });
}
