import { finished, type Readable } from 'node:stream';

/** The request body ended before its end: the client went away or the connection broke. */
export class BodyInterruptedError extends Error {
  constructor(readonly cause: unknown) {
    super('the request body ended early');
  }
}

/**
 * Hands the body to `take` chunk by chunk as it arrives ('data' events, no per-chunk promise);
 * while a promise `take` returned is pending, the body is paused, so the socket stops being read
 * (backpressure). Resolves at the end of the body; rejects with what `take` threw or rejected with
 * (the rest of the body is then read and dropped, so a kept-alive connection stays usable), or
 * with a BodyInterruptedError.
 */
export function consumeBody(
  body: Readable,
  take: (chunk: Buffer) => Promise<void> | void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const stopEnd = finished(body, { writable: false }, (err) => {
      if (err) fail(new BodyInterruptedError(err));
      else settle(resolve);
    });
    const settle = (done: () => void): void => {
      if (settled) return;
      settled = true;
      stopEnd();
      body.off('data', onData);
      done();
    };
    const fail = (err: unknown): void => {
      settle(() => reject(err));
      if (!(err instanceof BodyInterruptedError)) body.resume();
    };
    const onData = (chunk: Buffer): void => {
      let pending: Promise<void> | void;
      try {
        pending = take(chunk);
      } catch (err) {
        return fail(err);
      }
      if (!pending) return;
      body.pause();
      pending.then(() => settled || body.resume(), fail);
    };
    body.on('data', onData);
  });
}
