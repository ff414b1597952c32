import { createHasher, Hasher } from '@hashq/native';
import { SourceError } from '@hashq/sources';
import { classifyError, StateInvalidError } from './job-errors';

describe('classifyError', () => {
  it('keeps a source code and whether it is permanent', () => {
    expect(classifyError(new SourceError('SOURCE_CHANGED', 'changed'))).toMatchObject({ code: 'SOURCE_CHANGED', permanent: true });
    expect(classifyError(new SourceError('SOURCE_READ_FAILED', 'EIO'))).toMatchObject({ code: 'SOURCE_READ_FAILED', permanent: false });
  });

  it('makes a state the library refuses a permanent STATE_INVALID', () => {
    const state = createHasher('sha256').update('abc').serialize();
    state[state.length - 1] ^= 1; // breaks the checksum
    let refused: unknown;
    try {
      Hasher.restore(state, 'sha256');
    } catch (err) {
      refused = err;
    }
    expect(classifyError(new StateInvalidError(String(refused)))).toMatchObject({ code: 'STATE_INVALID', permanent: true });
    expect(classifyError(refused)).toMatchObject({ code: 'STATE_INVALID', permanent: true });
  });

  it('makes an algorithm the library does not know a permanent UNKNOWN_ALGORITHM', () => {
    let refused: unknown;
    try {
      createHasher('no-such-hash');
    } catch (err) {
      refused = err;
    }
    expect(classifyError(refused)).toMatchObject({ code: 'UNKNOWN_ALGORITHM', permanent: true });
  });

  it('treats anything else (a dropped connection, ...) as transient', () => {
    expect(classifyError(new Error('Connection terminated unexpectedly'))).toMatchObject({ code: 'INTERNAL_ERROR', permanent: false });
  });
});
