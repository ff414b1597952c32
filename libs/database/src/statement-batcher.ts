/**
 * Groups the statements of concurrent requests: each `submit` is one item (a session's row to
 * read, insert or write); items that arrive while the group's statements are in flight wait and
 * go together in the next statement, one round trip and (for writes) one WAL flush for all. An
 * item alone on an idle batcher goes at once (after the current event-loop turn, so the requests
 * of one turn share a statement): a single client waits for no timer.
 *
 * The answers of a statement are handed out a few at a time, one slice per event-loop turn: the
 * requests a statement answers continue in slices (their responses, their next steps), so the
 * loop keeps turning (timers, other sockets) while hundreds of them go on.
 *
 * Items of one statement have distinct keys (a row's id): two writes of the same row never share
 * one statement (an UPDATE ... FROM would apply only one of them), they go in concurrent
 * statements and the row's fence lets at most one land.
 *
 * When a statement of several items fails, each item runs again alone: one item's refusal (a
 * trigger's exception, a constraint) fails only its own request.
 */
/** Requests a statement's answers resume per event-loop turn. */
const RESUME_SLICE = 4;

type Waiter<I, O> = { item: I; resolve: (out: O) => void; reject: (err: unknown) => void };

export class StatementBatcher<I, O> {
  private queue: Waiter<I, O>[] = [];
  private running = 0;
  private scheduled = false;

  /**
   * @param run one statement for `items` (distinct keys), its answers in the same order
   * @param concurrency statements of this batcher in flight at once (pooled connections it may hold)
   * @param maxItems most items in one statement
   */
  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly key: (item: I) => string,
    private readonly concurrency: number,
    private readonly maxItems: number,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.scheduled && this.running < this.concurrency) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.flush();
        });
      }
    });
  }

  private flush(): void {
    while (this.running < this.concurrency && this.queue.length > 0) {
      const batch: typeof this.queue = [];
      const keys = new Set<string>();
      const rest: typeof this.queue = [];
      for (const entry of this.queue) {
        const key = this.key(entry.item);
        if (batch.length < this.maxItems && !keys.has(key)) {
          keys.add(key);
          batch.push(entry);
        } else rest.push(entry);
      }
      this.queue = rest;
      this.running++;
      this.run(batch.map((entry) => entry.item))
        .then(
          (answers) => resume(batch, (entry, i) => entry.resolve(answers[i])),
          (err: unknown) => (batch.length === 1 ? batch[0].reject(err) : this.runAlone(batch)),
        )
        .finally(() => {
          this.running--;
          this.flush();
        });
    }
  }

  /** Each item of a failed group in a statement of its own, all at once. */
  private async runAlone(batch: Waiter<I, O>[]): Promise<void> {
    await Promise.all(
      batch.map((entry) =>
        this.run([entry.item]).then(([answer]) => entry.resolve(answer), entry.reject),
      ),
    );
  }
}

/** Settles the waiters RESUME_SLICE at a time, the first slice now, each next one on the next turn. */
function resume<W>(waiters: W[], settle: (waiter: W, index: number) => void, from = 0): void {
  const to = Math.min(waiters.length, from + RESUME_SLICE);
  for (let i = from; i < to; i++) settle(waiters[i], i);
  if (to < waiters.length) setImmediate(() => resume(waiters, settle, to));
}
