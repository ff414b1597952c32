/** The worker's error classes, and the code each error a run throws is stored with. */
import { SealedStateError } from '@hashq/crypto';
import { HashqError } from '@hashq/native';
import { SourceError } from '@hashq/sources';

/**
 * The job's fence moved on (another worker owns it now) or the job left
 * 'running' behind this worker's back: it must stop and write nothing.
 */
export class LeaseLostError extends Error {
  readonly name = 'LeaseLostError';
  readonly code = 'LEASE_LOST';
  constructor(
    readonly jobId: string,
    readonly fence: number,
  ) {
    super(`lease of job ${jobId} lost (fence ${fence} is stale)`);
  }
}

/** A checkpointed state is missing, refused or does not match the checkpoint: the job cannot resume. */
export class StateInvalidError extends Error {
  readonly name = 'StateInvalidError';
  readonly code = 'STATE_INVALID';

  static missing(what: string): StateInvalidError {
    return new StateInvalidError(`no checkpointed state for ${what}`);
  }
}

/** An error as stored with the job (jobs.error_code, error_message, error_details). */
export interface JobError {
  code: string;
  message: string;
  details?: unknown;
}

export interface ClassifiedError extends JobError {
  /** No retry can cure it: fail the job at once. */
  permanent: boolean;
}

/** Maps whatever a run threw to the code stored in jobs.error_code. */
export function classifyError(err: unknown): ClassifiedError {
  if (err instanceof SourceError) {
    return { code: err.code, message: err.message, details: err.details, permanent: err.permanent };
  }
  if (err instanceof StateInvalidError || err instanceof SealedStateError) {
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
