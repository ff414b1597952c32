/**
 * Errors thrown by @hashq/native. Every one is a HashqError with a stable
 * `code`; the native layer reports an hq_status number, which lib/addon.ts
 * names (the addon exports the names) and `fromCode` maps to a subclass.
 */
export class HashqError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
    this.name = new.target.name;
  }
}

export class UnknownAlgorithmError extends HashqError {
  constructor(message: string) {
    super('ERR_UNKNOWN_ALGORITHM', message);
  }
}

export class InvalidStateError extends HashqError {
  constructor(message: string) {
    super('ERR_STATE_INVALID', message);
  }
}

export class StateAlgorithmMismatchError extends HashqError {
  constructor(message: string) {
    super('ERR_STATE_ALGORITHM_MISMATCH', message);
  }
}

export class UnsupportedStateVersionError extends HashqError {
  constructor(message: string) {
    super('ERR_STATE_VERSION', message);
  }
}

export class BusyError extends HashqError {
  constructor(message = 'an asynchronous update is in progress on this hasher') {
    super('ERR_BUSY', message);
  }
}

export class BadArgumentError extends HashqError {
  constructor(message: string) {
    super('ERR_BAD_ARGUMENT', message);
  }
}

/** The error of each code the addon reports (its hq_status names, src/hashq.h). */
const BY_CODE: Record<string, new (message: string) => HashqError> = {
  ERR_UNKNOWN_ALGORITHM: UnknownAlgorithmError,
  ERR_STATE_INVALID: InvalidStateError,
  ERR_STATE_ALGORITHM_MISMATCH: StateAlgorithmMismatchError,
  ERR_STATE_VERSION: UnsupportedStateVersionError,
  ERR_BAD_ARGUMENT: BadArgumentError,
};

/** The HashqError subclass for `code`; ERR_INTERNAL for a code it does not know. */
export function fromCode(code: string, message: string): HashqError {
  const make = BY_CODE[code];
  return make ? new make(message) : new HashqError('ERR_INTERNAL', `${message} (${code})`);
}

/** Message for a failed state load, by code. */
export function stateErrorMessage(code: string): string {
  switch (code) {
    case 'ERR_STATE_ALGORITHM_MISMATCH':
      return 'the state belongs to another algorithm';
    case 'ERR_STATE_VERSION':
      return 'the state was written by a newer format version';
    default:
      return 'the state is invalid (bad magic, size, field or checksum)';
  }
}
