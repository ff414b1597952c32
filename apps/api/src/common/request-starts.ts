import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';

/** Most time of one event-loop turn spent starting requests (routing, middleware, guards). */
export const START_BUDGET_MS = 2;
/**
 * Most requests started in one event-loop turn. A request that waits here holds only its parsed
 * headers; once started it holds its route's whole chain (express, Nest, guards, async contexts)
 * until it ends, and with hundreds in flight most of that outlives a young-generation GC: the
 * fewer wait started, the less each scavenge copies (docs/digest-sessions.md, "GC pauses").
 */
export const MAX_STARTS_PER_TURN = 4;

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Spreads the starts of requests that arrive together over event-loop turns. libuv hands every
 * ready socket to one poll phase, so a thousand requests arriving at once would each be parsed,
 * routed and run through the middleware and guards in that one turn: hundreds of ms during which
 * no timer fires, no database answer is read and no response is written. Here a turn starts
 * at most `maxStarts` requests, for at most `budgetMs`; the others wait, in arrival order, for the next turns
 * (setImmediate: timers and sockets are served between). A request alone starts at once, and a
 * waiting request's body is buffered or paused by Node as for any request not read yet.
 */
export function spreadRequestStarts(
  server: Server,
  budgetMs = START_BUDGET_MS,
  now: () => number = () => performance.now(),
  maxStarts = MAX_STARTS_PER_TURN,
): void {
  const handlers = server.listeners('request') as Handler[];
  server.removeAllListeners('request');
  const waiting: [IncomingMessage, ServerResponse][] = [];
  let head = 0;
  /** When the current turn started starting requests; undefined: none started in this turn. */
  let turnStart: number | undefined;
  /** Requests started in the current turn. */
  let started = 0;

  const mayStart = (): boolean => started < maxStarts && now() - turnStart! < budgetMs;
  const start = (req: IncomingMessage, res: ServerResponse): void => {
    started++;
    for (const handler of handlers) handler.call(server, req, res);
  };
  const beginTurn = (): void => {
    turnStart = now();
    started = 0;
    setImmediate(endTurn);
  };
  const endTurn = (): void => {
    turnStart = undefined;
    if (head === waiting.length) return;
    beginTurn();
    while (head < waiting.length && mayStart()) {
      const [req, res] = waiting[head];
      waiting[head++] = undefined as never; // let it be collected
      start(req, res);
    }
    if (head === waiting.length) {
      waiting.length = 0;
      head = 0;
    }
  };

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (turnStart === undefined) beginTurn();
    if (head === waiting.length && mayStart()) start(req, res);
    else waiting.push([req, res]);
  });
}
