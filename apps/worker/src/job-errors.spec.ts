import { randomBytes } from 'node:crypto';

import { jobStateBinding, StateSealer } from '@hashq/crypto';
import { createHasher, Hasher } from '@hashq/native';
import { SourceError } from '@hashq/sources';

import { classifyError, StateInvalidError } from './job-errors';

describe('classifyError', () => {
  it('keeps a source code and whether it is permanent', () => {
    expect(classifyError(new SourceError('SOURCE_CHANGED', 'changed'))).toMatchObject({
      code: 'SOURCE_CHANGED',
      permanent: true,
    });
    expect(classifyError(new SourceError('SOURCE_READ_FAILED', 'EIO'))).toMatchObject({
      code: 'SOURCE_READ_FAILED',
      permanent: false,
    });
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
    expect(classifyError(new StateInvalidError(String(refused)))).toMatchObject({
      code: 'STATE_INVALID',
      permanent: true,
    });
    expect(classifyError(refused)).toMatchObject({ code: 'STATE_INVALID', permanent: true });
  });

  it("makes a sealed state that does not open a permanent STATE_INVALID, with the sealer's message", () => {
    const binding = jobStateBinding('j', 'sha256', 1, 1);
    const sealed = new StateSealer([{ id: 'old', key: randomBytes(32) }]).seal(
      Buffer.from('state'),
      binding,
    );
    let refused: unknown;
    try {
      new StateSealer([{ id: 'new', key: randomBytes(32) }]).open(sealed, binding);
    } catch (err) {
      refused = err;
    }
    expect(classifyError(refused)).toEqual({
      code: 'STATE_INVALID',
      message: 'state sealed with key "old", which HASHQ_STATE_KEYS does not list (it has "new")',
      permanent: true,
    });
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
    expect(classifyError(new Error('Connection terminated unexpectedly'))).toMatchObject({
      code: 'INTERNAL_ERROR',
      permanent: false,
    });
  });
});
