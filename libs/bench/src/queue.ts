/**
 * Benchmark jobs run on a worker of the requested CPU architecture: one
 * BullMQ queue per architecture, named after Node's process.arch.
 */
export const BENCHMARK_ARCHS = [
  'x64',
  'arm64',
  'riscv64',
  'arm',
  'ia32',
  'ppc64',
  's390x',
  'loong64',
  'mips64el',
] as const;

export function benchmarkQueueName(arch: string = process.arch): string {
  return `bench-${arch}`;
}

/** A benchmark job carries only the run id: the request is in benchmark_runs. */
export interface BenchmarkJobData {
  runId: string;
}

/** What a client may ask for (POST /v1/benchmarks), stored as benchmark_runs.request. */
export interface BenchmarkRequest {
  algorithms?: string[];
  implementations?: string[];
  lengths?: number[];
  arch?: string;
  quick?: boolean;
}
