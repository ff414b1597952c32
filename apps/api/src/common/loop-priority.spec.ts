import { constants, getPriority, setPriority } from 'node:os';

import {
  HELPER_FIFO_PRIORITY,
  LOOP_FIFO_PRIORITY,
  LOOP_NICE_STEP,
  raiseLoopPriority,
  realtimeLoop,
} from './loop-priority';

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

describe('realtimeLoop', () => {
  /** A process of threads `tids` (its pid among them); setFifo answers `answer(tid)`. */
  function fakeScheduler(tids: number[], answer: (tid: number) => number = () => 0) {
    const calls: [number, number][] = [];
    return {
      calls,
      threads: () => tids,
      setFifo: (tid: number, priority: number) => {
        calls.push([tid, priority]);
        return answer(tid);
      },
    };
  }

  it('puts the calling thread above every other thread of the process', () => {
    const system = fakeScheduler([process.pid, 11, 12, 13]);
    expect(realtimeLoop(system)).toEqual({ threads: 4 });
    expect(system.calls).toEqual([
      [0, LOOP_FIFO_PRIORITY], // 0: the calling thread
      [11, HELPER_FIFO_PRIORITY],
      [12, HELPER_FIFO_PRIORITY],
      [13, HELPER_FIFO_PRIORITY],
    ]);
    expect(HELPER_FIFO_PRIORITY).toBeLessThan(LOOP_FIFO_PRIORITY);
  });

  it('touches no helper when the system refuses the loop, and says why', () => {
    const system = fakeScheduler([process.pid, 11], () => -constants.errno.EPERM);
    expect(realtimeLoop(system)).toEqual({ threads: 0, refused: 'EPERM' });
    expect(system.calls).toEqual([[0, LOOP_FIFO_PRIORITY]]);
  });

  it('counts the threads that moved (one may end meanwhile)', () => {
    const system = fakeScheduler([process.pid, 11, 12], (tid) =>
      tid === 11 ? -constants.errno.ESRCH : 0,
    );
    expect(realtimeLoop(system)).toEqual({ threads: 2 });
  });
});
