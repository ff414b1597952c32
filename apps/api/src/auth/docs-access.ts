import type { HashqConfig } from '@hashq/config';
import type { NextFunction, Request, Response } from 'express';

import type { ApiError } from '../common/api-error';
import { bearerToken } from './api-key';
import { scopeMissing, unauthorized } from './auth.guard';
import type { KeyVerifier } from './key-verifier';
import { hasScopeIn } from './scopes';

/**
 * /docs is served by Swagger's own Express routes, outside the guard: with HASHQ_DOCS_ACCESS=key
 * (the default off loopback) this middleware asks for an admin key first, with the guard's answers.
 */
export function docsAccess(config: HashqConfig, verifier: KeyVerifier) {
  const refuse = (res: Response, error: ApiError) =>
    res.status(error.getStatus()).json(error.getResponse());
  return (req: Request, res: Response, next: NextFunction): void => {
    if (config.auth.docs === 'open' || !config.auth.enabled) return next();
    const token = bearerToken(req.headers.authorization);
    const check = token === null ? Promise.resolve(null) : verifier.verify(token);
    check.then(
      (principal) => {
        if (!principal) refuse(res, unauthorized(res));
        else if (!hasScopeIn(principal.scopes, 'admin')) refuse(res, scopeMissing('admin'));
        else next();
      },
      (err: unknown) => next(err),
    );
  };
}
