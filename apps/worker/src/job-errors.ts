import { SealedStateError } from '@hashq/crypto';
import { HashqError } from '@hashq/native';
import { SourceError } from '@hashq/sources';
import type { JobError } from './checkpoint-store.js';
import { StateInvalidError } from './hash-run.js';
import { MissingStateError } from './job-hashers.js';

export interface ClassifiedError extends JobError {
  /** No retry can cure it: fail the job at once. */
  permanent: boolean;
}

/** Maps whatever a run threw to the code stored in jobs.error_code. */
export function classifyError(err: unknown): ClassifiedError {
  if (err instanceof SourceError) {
    return { code: err.code, message: err.message, details: err.details, permanent: err.permanent };
  }
  if (err instanceof StateInvalidError || err instanceof MissingStateError || err instanceof SealedStateError) {
    return { code: 'STATE_INVALID', message: err.message, permanent: true };
  }
  if (err instanceof HashqError) {
    // A state the library refuses, or a job it cannot run (unknown algorithm, bad option): retrying cannot help.
    const code = err.code.startsWith('ERR_STATE')
      ? 'STATE_INVALID'
      : err.code === 'ERR_UNKNOWN_ALGORITHM'
        ? 'UNKNOWN_ALGORITHM'
        : 'INVALID_JOB';
    return { code, message: err.message, permanent: true };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { code: 'INTERNAL_ERROR', message, permanent: false };
}
