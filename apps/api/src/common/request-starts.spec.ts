import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers/promises';

import { spreadRequestStarts } from './request-starts';

describe('spreadRequestStarts', () => {
  /** A server whose handler takes 1 ms of a fake clock per request; what started, per turn. */
  function setup(maxStarts?: number) {
    let clock = 0;
    const started: number[] = [];
    const server = createServer((req: IncomingMessage) => {
      started.push(Number(req.url));
      clock += 1;
    });
    spreadRequestStarts(server, 2.5, () => clock, maxStarts);
    const arrive = (...ids: number[]) => {
      for (const id of ids) {
        server.emit('request', { url: String(id) } as IncomingMessage, {} as ServerResponse);
      }
    };
    return { started, arrive };
  }

  it('starts a lone request at once', () => {
    const { started, arrive } = setup();
    arrive(1);
    expect(started).toEqual([1]);
  });

  it('starts requests that arrive together within the budget of a turn, the rest in later turns, in order', async () => {
    const { started, arrive } = setup();
    arrive(1, 2, 3, 4, 5, 6, 7, 8);
    expect(started).toEqual([1, 2, 3]); // 0, 1 and 2 ms into the turn; the 4th would start at 3
    await nextTurn();
    expect(started).toEqual([1, 2, 3, 4, 5, 6]);
    arrive(9); // arrives while others wait: behind them
    expect(started).toEqual([1, 2, 3, 4, 5, 6]);
    await nextTurn();
    await nextTurn();
    expect(started).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    await nextTurn();
    arrive(10); // the queue is empty again: at once
    expect(started).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('starts at most maxStarts requests in a turn, however cheap', async () => {
    const { started, arrive } = setup(2);
    arrive(1, 2, 3, 4, 5);
    expect(started).toEqual([1, 2]);
    await nextTurn();
    expect(started).toEqual([1, 2, 3, 4]);
    await nextTurn();
    expect(started).toEqual([1, 2, 3, 4, 5]);
  });
});
