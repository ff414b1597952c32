import { ApiError } from '../common/api-error';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** An opaque page cursor: the id of the last job of the page, base64url-encoded. */
export function encodeCursor(jobId: string): string {
  return Buffer.from(jobId, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!UUID.test(id)) {
    throw ApiError.validation('cursor is not a cursor returned by this API', [
      { field: 'cursor', problems: ['invalid cursor'] },
    ]);
  }
  return id;
}

export function isUuid(text: string): boolean {
  return UUID.test(text.toLowerCase());
}
