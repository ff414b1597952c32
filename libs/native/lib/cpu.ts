/**
 * The CPU as the addon sees it: the features dispatch uses, and the cycle
 * counter the benchmarks read.
 */
import { native } from './addon';

/**
 * The CPU features dispatch uses (`active`) and the ones the CPU has
 * (`detected`), by name. They differ when HASHQ_NATIVE_IMPL=portable or
 * HASHQ_NATIVE_DISABLE (a comma-separated list of names) hides some.
 */
export function cpuFeatures(): { active: string[]; detected: string[] } {
  return { active: [...native.cpuFeatures], detected: [...native.cpuDetected] };
}

/** The CPU's cycle counter (rdtsc, cntvct_el0, rdtime or a monotonic clock). */
export function cpucycles(): bigint {
  return native.cpucycles();
}

/** Which counter cpucycles() reads, e.g. "rdtsc". */
export function cpucyclesSource(): string {
  return native.cpucyclesSource();
}
