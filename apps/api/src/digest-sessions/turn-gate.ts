/**
 * Spreads the starts of many requests over event-loop turns: up to `perTurn` go on at once in one
 * turn, the others wait for later turns (setImmediate: timers and sockets get their turn between).
 * A thousand PATCHes that arrive together would otherwise all restore their hashers, hash their
 * body and seal their states in one turn, and the loop would stall for as long. A lone request
 * never waits.
 */
export class TurnGate {
  private admitted = 0;
  private waiting: (() => void)[] = [];
  private scheduled = false;

  constructor(private readonly perTurn: number) {}

  /** Undefined: go on now; a promise: go on when it resolves, in a later turn. */
  enter(): Promise<void> | undefined {
    this.schedule();
    if (this.waiting.length === 0 && this.admitted < this.perTurn) {
      this.admitted++;
      return undefined;
    }
    return new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.turn());
  }

  /** A new turn: the next `perTurn` waiters go on. */
  private turn(): void {
    this.scheduled = false;
    const next = this.waiting.splice(0, this.perTurn);
    this.admitted = next.length;
    for (const resolve of next) resolve();
    if (this.waiting.length > 0 || this.admitted > 0) this.schedule();
  }
}
