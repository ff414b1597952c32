/**
 * At most one fenced write (heartbeat or checkpoint) in flight beside the
 * hashing, so a slow PostgreSQL round trip does not stall the pipeline. What a
 * write reports (a cancel request, a lost lease, an error) is picked up at the
 * next chunk boundary, or by the run's pulse while a read is blocked.
 */
export class WriteBehind {
  private pending: Promise<void> | null = null;
  private failure: { error: unknown } | null = null;
  private checkpointPending = false;
  cancelRequested = false;

  get busy(): boolean {
    return this.pending !== null;
  }

  /** True while a checkpoint (not just a heartbeat) has not committed yet. */
  get checkpointInFlight(): boolean {
    return this.checkpointPending;
  }

  /** Starts a write; the slot must be free (call settle() first). */
  start(write: () => Promise<{ cancelRequested: boolean }>, isCheckpoint: boolean): void {
    if (this.pending) throw new Error('a write is already in flight');
    this.checkpointPending = isCheckpoint;
    this.pending = write().then(
      (result) => {
        if (result.cancelRequested) this.cancelRequested = true;
      },
      (error: unknown) => {
        this.failure ??= { error };
      },
    );
    void this.pending.then(() => {
      this.pending = null;
      this.checkpointPending = false;
    });
  }

  /** Waits for the write in flight and rethrows what any write failed with. */
  async settle(): Promise<void> {
    while (this.pending) await this.pending;
    this.throwIfFailed();
  }

  /** Waits until nothing is in flight, whatever the outcome (on the way out of a failed run). */
  async idle(): Promise<void> {
    while (this.pending) await this.pending;
  }

  /** True once a write failed (its error is thrown by settle() and throwIfFailed()). */
  get failed(): boolean {
    return this.failure !== null;
  }

  throwIfFailed(): void {
    if (this.failure) throw this.failure.error;
  }
}
