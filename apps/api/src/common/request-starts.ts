import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';

/** Most time of one event-loop turn spent starting requests (routing, middleware, guards). */
export const START_BUDGET_MS = 2;

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Spreads the starts of requests that arrive together over event-loop turns. libuv hands every
 * ready socket to one poll phase, so a thousand requests arriving at once would each be parsed,
 * routed and run through the middleware and guards in that one turn: hundreds of ms during which
 * no timer fires, no database answer is read and no response is written. Here a turn starts
 * requests for at most `budgetMs`; the others wait, in arrival order, for the next turns
 * (setImmediate: timers and sockets are served between). A request alone starts at once, and a
 * waiting request's body is buffered or paused by Node as for any request not read yet.
 */
export function spreadRequestStarts(
  server: Server,
  budgetMs = START_BUDGET_MS,
  now: () => number = () => performance.now(),
): void {
  const handlers = server.listeners('request') as Handler[];
  server.removeAllListeners('request');
  const waiting: [IncomingMessage, ServerResponse][] = [];
  let head = 0;
  /** When the current turn started starting requests; undefined: none started in this turn. */
  let turnStart: number | undefined;

  const start = (req: IncomingMessage, res: ServerResponse): void => {
    for (const handler of handlers) handler.call(server, req, res);
  };
  const beginTurn = (): void => {
    turnStart = now();
    setImmediate(endTurn);
  };
  const endTurn = (): void => {
    turnStart = undefined;
    if (head === waiting.length) return;
    beginTurn();
    while (head < waiting.length && now() - turnStart! < budgetMs) {
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
    if (head === waiting.length && now() - turnStart! < budgetMs) start(req, res);
    else waiting.push([req, res]);
  });
}
