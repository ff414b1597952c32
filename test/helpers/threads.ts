import { readdirSync, readFileSync } from 'node:fs';

/** Fields of /proc/<pid>/stat (proc(5)): minor faults, the nice value, the real-time priority,
 * the scheduling policy (0 SCHED_OTHER, 1 SCHED_FIFO, 5 SCHED_IDLE). */
export const STAT_MINFLT = 10;
export const STAT_NICE = 19;
export const STAT_RT_PRIORITY = 40;
export const STAT_POLICY = 41;

/** Field `field` (1-based, as proc(5) counts) of a stat file's text. */
function statField(stat: string, field: number): number {
  // the command name (field 2) may hold spaces: count from the ')' that ends it (field 3 on)
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[field - 3]);
}

/** Field `field` of /proc/<pid>/stat: the whole process (its threads, exited ones too). */
export function processStat(pid: number, field: number): number {
  return statField(readFileSync(`/proc/${pid}/stat`, 'utf8'), field);
}

/** tid → field `field` of /proc/<pid>/task/<tid>/stat, every thread. */
export function threadStat(pid: number, field: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`))
    out.set(Number(tid), statField(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'), field));
  return out;
}
