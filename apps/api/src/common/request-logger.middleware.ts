import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';

import { requestIdOf } from './request-id.middleware';

/** Query parameters whose value is a credential by its name (`?key=`, `?access_token=`, …). */
const SECRET_PARAMETER = /key|token|secret|auth|password|signature|credential/i;
/** An API key (`hq_<id>_<secret>`) wherever it appears in a URL. */
const API_KEY = /hq_[A-Za-z0-9_-]{6,}/g;

function decoded(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/** The URL as logged: API keys and the values of secret-named query parameters are redacted. */
export function redactUrl(url: string): string {
  const question = url.indexOf('?');
  const path = (question < 0 ? url : url.slice(0, question)).replace(API_KEY, '[redacted]');
  if (question < 0) return path;
  const query = url
    .slice(question + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals < 0 ? pair : pair.slice(0, equals);
      const value = equals < 0 ? '' : pair.slice(equals + 1);
      const secret = SECRET_PARAMETER.test(decoded(name)) || decoded(value).search(API_KEY) >= 0;
      if (equals >= 0 && secret) return `${name}=[redacted]`;
      return pair.replace(API_KEY, '[redacted]');
    });
  return `${path}?${query.join('&')}`;
}

/**
 * One JSON log line per HTTP request, written when the response is finished: no bodies, no
 * headers, the URL redacted (redactUrl), the request id.
 */
export function requestLogger(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const level = res.statusCode >= 500 ? 'error' : 'info';
      logger[level](
        {
          requestId: requestIdOf(res),
          method: req.method,
          url: redactUrl(req.originalUrl),
          status: res.statusCode,
          ms: Math.round(ms * 10) / 10,
        },
        'request',
      );
    });
    next();
  };
}
