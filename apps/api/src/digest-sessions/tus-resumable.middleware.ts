import type { NextFunction, Request, Response } from 'express';

import { TUS_VERSION, unsupportedVersion } from './tus-headers';

/**
 * Every answer of the digest-session routes, errors included, carries Tus-Resumable. A tus
 * request of another version (or none) is refused with 412; OPTIONS (discovery) and GET (the
 * JSON view) may come without the header.
 */
export function tusResumable(req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Tus-Resumable', TUS_VERSION);
  const version = req.headers['tus-resumable'];
  const optional = req.method === 'OPTIONS' || req.method === 'GET';
  if (version === TUS_VERSION || (optional && version === undefined)) return next();
  res.setHeader('Tus-Version', TUS_VERSION);
  throw unsupportedVersion(typeof version === 'string' ? version : undefined);
}
