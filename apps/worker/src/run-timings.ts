/** The stages of the read/hash loop whose waiting time is summed. */
export type RunStage = 'readWait' | 'hash' | 'writeWait';

/**
 * Where one run's time goes, logged with 'finished' (bench:e2e reads it): milliseconds waited per
 * loop stage, milliseconds since the lease at the end of each phase, and the checkpoints' cost.
 */
export class RunTimings {
  private readonly waits: Record<RunStage, number> = { readWait: 0, hash: 0, writeWait: 0 };
  private readonly phases: Record<string, number> = {};
  private readonly leasedAt = performance.now();
  private readonly checkpoints = { count: 0, ms: 0 };

  /** The phase ends now. */
  mark(phase: string): void {
    this.phases[phase] = Math.round(performance.now() - this.leasedAt);
  }

  /** `work`, its time added to `stage`. */
  async timed<T>(stage: RunStage, work: Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await work;
    } finally {
      this.waits[stage] += performance.now() - started;
    }
  }

  checkpointSaved(ms: number): void {
    this.checkpoints.count++;
    this.checkpoints.ms += ms;
  }

  /** The fields of the 'finished' log line, rounded to milliseconds. */
  summary(): {
    ms: Record<string, number>;
    phases: Record<string, number>;
    checkpoints: { count: number; ms: number };
  } {
    const ms = Object.fromEntries(
      Object.entries(this.waits).map(([stage, value]) => [stage, Math.round(value)]),
    );
    const checkpoints = { count: this.checkpoints.count, ms: Math.round(this.checkpoints.ms) };
    return { ms, phases: this.phases, checkpoints };
  }
}
