import { isConnectionError } from './connection-errors';

describe('isConnectionError', () => {
  it('tells connection failures from answers of the server', () => {
    const terminated = Object.assign(
      new Error('terminating connection due to administrator command'),
      { code: '57P01' },
    );
    const wrapped = Object.assign(new Error('Query failed'), { driverError: terminated });
    for (const error of [
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
      Object.assign(new Error('connect ENETUNREACH 10.0.0.1:5432'), { code: 'ENETUNREACH' }),
      new Error('Connection terminated unexpectedly'),
      new Error('timeout exceeded when trying to connect'),
      terminated,
      wrapped,
      Object.assign(new Error('wrapped'), {
        cause: Object.assign(new Error('the database system is starting up'), { code: '57P03' }),
      }),
      Object.assign(new Error('sorry, too many clients already'), { code: '53300' }),
      Object.assign(new Error('database "x" is not currently accepting connections'), {
        code: '55000',
      }),
      new AggregateError([Object.assign(new Error('refused'), { code: 'ECONNREFUSED' })]),
    ]) {
      expect([error.message, isConnectionError(error)]).toEqual([error.message, true]);
    }
    for (const error of [
      // the worker's lost lease: its own error, never a connection problem
      Object.assign(new Error('lease of job j lost (fence 1 is stale)'), { code: 'LEASE_LOST' }),
      Object.assign(new Error('duplicate key value violates unique constraint "x"'), {
        code: '23505',
      }),
      Object.assign(new Error('syntax error at or near "x"'), { code: '42601' }),
      Object.assign(new Error('Query failed'), {
        driverError: Object.assign(new Error('division by zero'), { code: '22012' }),
      }),
      new Error('boom'),
      null,
      undefined,
      'ECONNREFUSED',
    ]) {
      expect(isConnectionError(error)).toBe(false);
    }
  });
});
