import { SourceError } from './source-error';

/** Maps a Node fs error to the stable code a job fails with. */
export function fsErrorToSourceError(err: unknown, path: string): SourceError {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const message = err instanceof Error ? err.message : String(err);
  switch (code) {
    case 'ENOENT':
    case 'ENOTDIR':
      return new SourceError('SOURCE_NOT_FOUND', 'file does not exist', { path });
    case 'EACCES':
    case 'EPERM':
      return new SourceError('SOURCE_FORBIDDEN', 'permission denied', { path });
    case 'ENAMETOOLONG':
      return new SourceError('SOURCE_NOT_FOUND', 'file name too long: no such file can exist', {
        path,
      });
    case 'ELOOP':
      return new SourceError('PATH_OUTSIDE_ROOTS', 'symbolic link refused', { path });
    default:
      // EIO, EMFILE, ...: may pass on a later attempt.
      return new SourceError('SOURCE_READ_FAILED', message, { path, errno: code ?? null });
  }
}
