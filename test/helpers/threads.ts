import { readdirSync, readFileSync } from 'node:fs';

/** Fields of /proc/<tid>/stat (proc(5)): the nice value and the scheduling policy. */
export const STAT_NICE = 19;
export const STAT_POLICY = 41;

/** tid → field `field` (1-based, as proc(5) counts) of /proc/<pid>/task/<tid>/stat, every thread. */
export function threadStat(pid: number, field: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    // the command name (field 2) may hold spaces: count from the ')' that ends it (field 3 on)
    out.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[field - 3]));
  }
  return out;
}
