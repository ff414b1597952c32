import { readdirSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { getSystemErrorName } from 'node:util';

import { setThreadFifo } from '@hashq/native';

/** How far API_LOOP_PRIORITY=high lowers the event-loop thread's nice value. */
export const LOOP_NICE_STEP = 5;
/** The lowest nice value (the highest priority) Linux has. */
const NICE_MIN = -20;

export interface LoopPriority {
  /** The thread's nice value before, and after. */
  from: number;
  nice: number;
  /** Why it stayed (the system error's code, EACCES without root or CAP_SYS_NICE). */
  refused?: string;
}

/** The two calls of node:os it makes (a test gives its own). */
export interface ThreadPriorities {
  getPriority(pid?: number): number;
  setPriority(pid: number, priority: number): void;
}

/**
 * Lowers the calling thread's nice value by LOOP_NICE_STEP (at most to -20). Called first thing by
 * the API: on Linux a nice value belongs to a thread and the threads it starts inherit it, so the
 * event loop and libuv's pool (which hashes the digest sessions' bodies) get it, V8's helpers
 * started with the process do not. On two shared cores the event loop then waits less for a CPU
 * behind PostgreSQL, the clients and its own GC helpers (docs/digest-sessions.md, "The event loop
 * at nice -5"). Without the right to raise a priority, nothing changes.
 */
export function raiseLoopPriority(
  os: ThreadPriorities = { getPriority, setPriority },
): LoopPriority {
  const from = os.getPriority(0);
  const nice = Math.max(NICE_MIN, from - LOOP_NICE_STEP);
  try {
    os.setPriority(0, nice);
    return { from, nice };
  } catch (err) {
    // Node's SystemError: code ERR_SYSTEM_ERROR, the system's own (EACCES) in info
    const { code, info } = err as { code?: string; info?: { code?: string } };
    return { from, nice: from, refused: info?.code ?? code ?? String(err) };
  }
}

/** API_LOOP_PRIORITY=realtime: SCHED_FIFO priorities of the event loop and of every other thread. */
export const LOOP_FIFO_PRIORITY = 2;
export const HELPER_FIFO_PRIORITY = 1;

export interface RealtimeLoop {
  /** Threads moved: the event loop and its helpers. */
  threads: number;
  /** Why not (EPERM without root, CAP_SYS_NICE or an RLIMIT_RTPRIO of 2). */
  refused?: string;
}

/** What realtimeLoop needs of the system (a test gives its own). */
export interface ThreadScheduler {
  /** The ids of this process's threads. */
  threads(): number[];
  /** sched_setscheduler: 0 or a negated errno. */
  setFifo(tid: number, priority: number): number;
}

/**
 * Moves the calling thread (the event loop) to SCHED_FIFO at LOOP_FIFO_PRIORITY and every other
 * thread the process has (V8's GC and compiler helpers, libuv's pool) to HELPER_FIFO_PRIORITY:
 * the loop then takes a core the moment it is runnable, and the helpers it waits for in a GC
 * (its joins, the hand-over of a task) get the other core before PostgreSQL, the clients and the
 * rest of the machine (docs/digest-sessions.md, "The event loop in real time"). Called once the
 * API listens, when its threads exist; threads started later begin at the normal policy. Refused
 * by the loop's own thread (no privilege), nothing changes.
 */
export function realtimeLoop(
  system: ThreadScheduler = {
    threads: () => readdirSync('/proc/self/task').map(Number),
    setFifo: setThreadFifo,
  },
): RealtimeLoop {
  const self = system.setFifo(0, LOOP_FIFO_PRIORITY);
  if (self !== 0) return { threads: 0, refused: getSystemErrorName(self) };
  let threads = 1;
  for (const tid of system.threads()) {
    if (tid !== process.pid && system.setFifo(tid, HELPER_FIFO_PRIORITY) === 0) threads += 1;
  }
  return { threads };
}
