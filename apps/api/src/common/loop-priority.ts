import { getPriority, setPriority } from 'node:os';

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
