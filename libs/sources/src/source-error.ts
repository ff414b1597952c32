/** Stable codes a source may fail with; they end up in jobs.error_code. */
export type SourceErrorCode =
  | 'SOURCE_NOT_FOUND'
  | 'SOURCE_FORBIDDEN'
  | 'SOURCE_CHANGED'
  | 'PATH_OUTSIDE_ROOTS'
  | 'NOT_A_REGULAR_FILE'
  | 'SOURCE_UNSUPPORTED'
  | 'SOURCE_ADDRESS_FORBIDDEN'
  | 'SOURCE_READ_FAILED'
  | 'SOURCE_TOO_SLOW'
  | 'SOURCE_TOO_LARGE'
  | 'SOURCE_NOT_ALLOWED';

/** Codes that no retry can cure: the job fails at once. */
const PERMANENT: ReadonlySet<SourceErrorCode> = new Set<SourceErrorCode>([
  'SOURCE_NOT_FOUND',
  'SOURCE_FORBIDDEN',
  'SOURCE_CHANGED',
  'PATH_OUTSIDE_ROOTS',
  'NOT_A_REGULAR_FILE',
  'SOURCE_UNSUPPORTED',
  'SOURCE_ADDRESS_FORBIDDEN',
  'SOURCE_TOO_SLOW',
  'SOURCE_TOO_LARGE',
  'SOURCE_NOT_ALLOWED',
]);

export class SourceError extends Error {
  override readonly name = 'SourceError';

  constructor(
    readonly code: SourceErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }

  get permanent(): boolean {
    return PERMANENT.has(this.code);
  }
}
