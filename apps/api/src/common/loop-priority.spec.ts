import { getPriority, setPriority } from 'node:os';

import { LOOP_NICE_STEP, raiseLoopPriority } from './loop-priority';

/** An os whose thread starts at `nice`; setPriority fails with `refuse` when given. */
function fakeOs(nice: number, refuse?: string) {
  const calls: [number, number][] = [];
  return {
    calls,
    getPriority: () => nice,
    setPriority: (pid: number, value: number) => {
      // as Node's os.setPriority fails: a SystemError, the system's code in info
      if (refuse) {
        throw Object.assign(new Error(`setpriority: ${refuse}`), {
          code: 'ERR_SYSTEM_ERROR',
          info: { code: refuse },
        });
      }
      calls.push([pid, value]);
    },
  };
}

describe('raiseLoopPriority', () => {
  it('lowers the calling thread’s nice value by the step, at most to -20', () => {
    const os = fakeOs(0);
    expect(raiseLoopPriority(os)).toEqual({ from: 0, nice: -LOOP_NICE_STEP });
    expect(os.calls).toEqual([[0, -LOOP_NICE_STEP]]); // pid 0: this thread (Linux)
    expect(raiseLoopPriority(fakeOs(-18))).toEqual({ from: -18, nice: -20 });
    expect(raiseLoopPriority(fakeOs(7))).toEqual({ from: 7, nice: 7 - LOOP_NICE_STEP });
  });

  it('changes nothing and says why when the system refuses', () => {
    expect(raiseLoopPriority(fakeOs(3, 'EACCES'))).toEqual({ from: 3, nice: 3, refused: 'EACCES' });
  });

  it('on this machine: the thread ends where it said, and is set back', () => {
    const before = getPriority(0);
    try {
      const outcome = raiseLoopPriority();
      expect(getPriority(0)).toBe(outcome.nice);
      expect(outcome.nice).toBe(outcome.refused ? before : Math.max(-20, before - LOOP_NICE_STEP));
    } finally {
      try {
        setPriority(0, before);
      } catch {
        // an unprivileged thread cannot go back down: it stays where the refusal left it
      }
    }
  });
});
