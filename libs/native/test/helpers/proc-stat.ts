import { readFileSync } from 'node:fs';

/** A thread's scheduling from its stat file (proc(5): field 40 the real-time priority, 41 the
 * policy, 0 SCHED_OTHER, 1 SCHED_FIFO). */
export function scheduling(statPath: string): { policy: number; priority: number } {
  const stat = readFileSync(statPath, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // from field 3 on
  return { priority: Number(fields[37]), policy: Number(fields[38]) };
}
