/**
 * A thread's scheduling policy: the addon sets it, Node has no call for it (os.setPriority sets a
 * nice value, which is not a policy).
 */
import { native } from './addon';

/**
 * Moves thread `tid` (a thread or process id; 0: the calling thread) to Linux's SCHED_FIFO at
 * `priority` (1-99): it then takes a core from every thread of the normal policy as soon as it is
 * runnable, and from FIFO threads of a lower priority. 0 moves it back to the normal policy.
 * Threads and processes it starts afterwards begin at the normal policy (SCHED_RESET_ON_FORK).
 * Returns 0 or a negated errno: EPERM without root, CAP_SYS_NICE or an RLIMIT_RTPRIO that allows
 * it; ENOSYS off Linux. Throws ERR_BAD_ARGUMENT unless tid < 2^31 and 0 <= priority <= 99.
 */
export function setThreadFifo(tid: number, priority: number): number {
  return native.setThreadFifo(tid, priority);
}
