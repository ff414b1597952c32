/**
 * setThreadFifo, read back from the kernel (/proc/<tid>/stat: field 40 the real-time priority, 41
 * the policy, 1 = SCHED_FIFO). The calling thread of a child process, a thread that process starts
 * afterwards (SCHED_RESET_ON_FORK: the normal policy), another process by its tid. Where this
 * process may not raise a priority (neither root nor CAP_SYS_NICE) the call must say EPERM and
 * change nothing.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { constants } from 'node:os';

import { setThreadFifo } from '../lib';
import { scheduling } from './helpers/proc-stat';
import { runChild } from './helpers/spawn';

const SCHED_OTHER = 0;
const SCHED_FIFO = 1;

/** Whether this process may raise a priority: bit 23 (CAP_SYS_NICE) of CapEff. */
function mayRaisePriority(): boolean {
  const status = readFileSync('/proc/self/status', 'utf8');
  const effective = BigInt(`0x${/^CapEff:\s*([0-9a-f]+)/m.exec(status)![1]}`);
  return (effective & (1n << 23n)) !== 0n;
}

const policyOf = (pid: number) => scheduling(`/proc/${pid}/stat`);

type Policies = Record<string, { policy: number; priority: number }>;

(process.platform === 'linux' ? describe : describe.skip)('setThreadFifo', () => {
  const allowed = mayRaisePriority();

  it('moves the calling thread, not the threads it starts afterwards', () => {
    const r = runChild<{
      pid: number;
      set: number;
      reset: number;
      before: Policies;
      during: Policies;
      after: Policies;
    }>('fifo-threads', { priority: 7 }, 'dispatched');
    const main = String(r.pid);
    const started = Object.keys(r.during).filter((tid) => !(tid in r.before));
    expect(started.length).toBeGreaterThan(0); // the worker's thread
    for (const tid of Object.keys(r.before).filter((t) => t !== main))
      expect(r.during[tid]).toEqual({ policy: SCHED_OTHER, priority: 0 }); // V8's, libuv's
    if (allowed) {
      expect(r.set).toBe(0);
      expect(r.during[main]).toEqual({ policy: SCHED_FIFO, priority: 7 });
      for (const tid of started)
        expect(r.during[tid]).toEqual({ policy: SCHED_OTHER, priority: 0 });
      expect(r.reset).toBe(0);
    } else {
      expect(r.set).toBe(-constants.errno.EPERM);
      expect(r.during[main]).toEqual({ policy: SCHED_OTHER, priority: 0 });
    }
    expect(r.after[main]).toEqual({ policy: SCHED_OTHER, priority: 0 });
  });

  it('moves another process by its id, and back', async () => {
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    await once(child, 'spawn');
    try {
      const pid = child.pid!;
      expect(policyOf(pid)).toEqual({ policy: SCHED_OTHER, priority: 0 });
      if (allowed) {
        expect(setThreadFifo(pid, 5)).toBe(0);
        expect(policyOf(pid)).toEqual({ policy: SCHED_FIFO, priority: 5 });
        expect(setThreadFifo(pid, 0)).toBe(0);
      } else {
        expect(setThreadFifo(pid, 5)).toBe(-constants.errno.EPERM);
      }
      expect(policyOf(pid)).toEqual({ policy: SCHED_OTHER, priority: 0 });
    } finally {
      child.kill();
    }
  });

  it('answers a thread that does not exist with ESRCH', () => {
    // pid_max is at most 2^22: no thread has this id
    expect(setThreadFifo(2 ** 30, 0)).toBe(-constants.errno.ESRCH);
  });

  it.each([
    ['priority 100', 0, 100],
    ['priority -1', 0, -1],
    ['a tid past int', 2 ** 31, 1],
    ['a string', '1' as unknown as number, 1],
  ])('throws ERR_BAD_ARGUMENT for %s', (_name, tid, priority) => {
    expect(() => setThreadFifo(tid, priority)).toThrow(
      expect.objectContaining({ code: 'ERR_BAD_ARGUMENT' }),
    );
  });
});
