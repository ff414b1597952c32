import { randomUUID } from 'node:crypto';

import type { NextFunction, Request, Response } from 'express';

export const REQUEST_ID_HEADER = 'X-Request-Id';

/**
 * An incoming X-Request-Id is kept when it is 1 to 128 characters of this set (a UUID, a trace id,
 * a load balancer's id); anything else could forge log lines or bloat them, and gets a new UUID.
 */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:/+=-]{1,128}$/;

/** The id of the request this response answers (set by requestId()). */
export function requestIdOf(res: Response): string | undefined {
  const id: unknown = res.locals.requestId;
  return typeof id === 'string' ? id : undefined;
}

/**
 * Gives every request an id: the client's sane X-Request-Id, or a new UUID. It is echoed in the
 * X-Request-Id response header and put in every error body (AllExceptionsFilter), in the request's
 * log line (requestLogger) and in the filter's lines about it.
 */
export function requestId() {
  return (req: Request, res: Response, next: NextFunction): void => {
    const incoming = req.headers['x-request-id'];
    const id =
      typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.locals.requestId = id;
    res.setHeader(REQUEST_ID_HEADER, id);
    next();
  };
}
