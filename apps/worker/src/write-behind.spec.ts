import { WriteBehind } from './write-behind';

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('WriteBehind', () => {
  it('keeps one write in flight and tells checkpoints from heartbeats', async () => {
    const writes = new WriteBehind();
    const write = deferred<{ cancelRequested: boolean }>();
    writes.start(() => write.promise, true);
    expect(writes.busy).toBe(true);
    expect(writes.checkpointInFlight).toBe(true);
    expect(() => writes.start(() => write.promise, false)).toThrow();
    write.resolve({ cancelRequested: false });
    await writes.settle();
    expect(writes.busy).toBe(false);
    expect(writes.checkpointInFlight).toBe(false);
  });

  it('remembers a cancel request reported by any write', async () => {
    const writes = new WriteBehind();
    writes.start(async () => ({ cancelRequested: true }), false);
    await writes.settle();
    writes.start(async () => ({ cancelRequested: false }), false);
    await writes.settle();
    expect(writes.cancelRequested).toBe(true);
  });

  it('surfaces a failed write at the next boundary and never as an unhandled rejection', async () => {
    const writes = new WriteBehind();
    const lost = new Error('lease lost');
    writes.start(async () => {
      throw lost;
    }, true);
    await writes.idle(); // does not throw
    expect(() => writes.throwIfFailed()).toThrow(lost);
    await expect(writes.settle()).rejects.toBe(lost);
  });
});
