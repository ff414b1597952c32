import { isConnectionError } from '@hashq/database';

import { LeaseLostError } from './job-errors';
import { retryWhileUnavailable } from './outage-retry';

describe('retryWhileUnavailable', () => {
  /** A clock that only moves when the retry loop sleeps. */
  function clock() {
    const sleeps: number[] = [];
    let now = 0;
    return {
      sleeps,
      now: () => now,
      sleep: async (ms: number) => {
        sleeps.push(ms);
        now += ms;
      },
    };
  }
  const transient = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
    code: 'ECONNREFUSED',
  });

  it('retries connection errors with capped exponential backoff and returns the result', async () => {
    const time = clock();
    let calls = 0;
    const recovered: number[] = [];
    const result = await retryWhileUnavailable(
      async () => {
        if (++calls <= 6) throw transient;
        return 'committed';
      },
      {
        maxMs: 60_000,
        initialDelayMs: 100,
        maxDelayMs: 1000,
        isTransient: isConnectionError,
        ...time,
        onRecovered: (n) => recovered.push(n),
      },
    );
    expect(result).toBe('committed');
    expect(calls).toBe(7);
    expect(recovered).toEqual([6]);
    // 100, 200, 400, 800, then capped at 1000 (each ±20 %)
    const nominal = [100, 200, 400, 800, 1000, 1000];
    expect(time.sleeps).toHaveLength(nominal.length);
    time.sleeps.forEach((ms, i) => {
      expect(ms).toBeGreaterThanOrEqual(nominal[i] * 0.8);
      expect(ms).toBeLessThanOrEqual(nominal[i] * 1.2);
    });
  });

  it('gives up with the last error once the total time would pass maxMs', async () => {
    const time = clock();
    let calls = 0;
    await expect(
      retryWhileUnavailable(
        async () => {
          calls++;
          throw transient;
        },
        {
          maxMs: 5000,
          initialDelayMs: 100,
          maxDelayMs: 1000,
          isTransient: isConnectionError,
          ...time,
        },
      ),
    ).rejects.toBe(transient);
    const slept = time.sleeps.reduce((a, b) => a + b, 0);
    expect(slept).toBeLessThanOrEqual(5000);
    expect(slept).toBeGreaterThan(5000 - 1200); // it did use the time it had
    expect(calls).toBe(time.sleeps.length + 1);
  });

  it('never retries a lost lease, a constraint violation, or anything when maxMs is 0', async () => {
    const constraint = Object.assign(new Error('duplicate key value violates unique constraint'), {
      code: '23505',
    });
    for (const error of [new LeaseLostError('j', 3), constraint, new Error('boom')]) {
      const time = clock();
      let calls = 0;
      await expect(
        retryWhileUnavailable(
          async () => {
            calls++;
            throw error;
          },
          {
            maxMs: 60_000,
            initialDelayMs: 100,
            maxDelayMs: 1000,
            isTransient: isConnectionError,
            ...time,
          },
        ),
      ).rejects.toBe(error);
      expect([calls, time.sleeps.length]).toEqual([1, 0]);
    }
    let calls = 0;
    const time = clock();
    await expect(
      retryWhileUnavailable(
        async () => {
          calls++;
          throw transient;
        },
        {
          maxMs: 0,
          initialDelayMs: 100,
          maxDelayMs: 1000,
          isTransient: isConnectionError,
          ...time,
        },
      ),
    ).rejects.toBe(transient);
    expect(calls).toBe(1);
  });
});
