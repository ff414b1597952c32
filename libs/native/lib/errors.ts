/**
 * Errors thrown by @hashq/native. Every one is a HashqError with a stable
 * `code`; the native layer reports an hq_status number that `fromStatus`
 * maps to the matching subclass.
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

/** enum hq_status of src/hashq.h (positive values). */
export const enum Status {
  UnknownAlgorithm = 1,
  StateInvalid = 2,
  StateAlgorithm = 3,
  StateVersion = 4,
  BadArgument = 5,
  Busy = 6,
}

export function fromStatus(status: number, message: string): HashqError {
  switch (status) {
    case Status.UnknownAlgorithm:
      return new UnknownAlgorithmError(message);
    case Status.StateInvalid:
      return new InvalidStateError(message);
    case Status.StateAlgorithm:
      return new StateAlgorithmMismatchError(message);
    case Status.StateVersion:
      return new UnsupportedStateVersionError(message);
    case Status.Busy:
      return new BusyError(message);
    case Status.BadArgument:
      return new BadArgumentError(message);
    default:
      return new HashqError('ERR_INTERNAL', `${message} (status ${status})`);
  }
}

/** Message for a failed state load, by status. */
export function stateErrorMessage(status: number): string {
  switch (status) {
    case Status.StateAlgorithm:
      return 'the state belongs to another algorithm';
    case Status.StateVersion:
      return 'the state was written by a newer format version';
    default:
      return 'the state is invalid (bad magic, size, field or checksum)';
  }
}
