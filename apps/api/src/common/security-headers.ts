import type { NextFunction, Request, RequestHandler, Response } from 'express';
import helmet from 'helmet';

type Directives = Record<string, string[]>;

/** Answers that are not HTML pages (JSON, the metrics text) load nothing and may not be framed. */
const API_POLICY: Directives = {
  defaultSrc: ["'none'"],
  baseUri: ["'none'"],
  formAction: ["'none'"],
  frameAncestors: ["'none'"],
};

/**
 * Swagger UI (/docs): its scripts are files of /docs (no inline script), it fetches /docs/json and
 * the API itself, and shows data: images. Its page has inline <style> blocks and a style attribute
 * written by @nestjs/swagger, and the UI sets styles at run time: styles need 'unsafe-inline' here,
 * on this page only.
 */
const DOCS_POLICY: Directives = {
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", 'data:'],
  fontSrc: ["'self'", 'data:'],
  connectSrc: ["'self'"],
  baseUri: ["'none'"],
  formAction: ["'none'"],
  frameAncestors: ["'none'"],
};

const withPolicy = (directives: Directives): RequestHandler =>
  helmet({
    contentSecurityPolicy: { useDefaults: false, directives },
    frameguard: { action: 'deny' },
  });

/**
 * helmet's headers on every answer (nosniff, no framing, no referrer, HSTS, …) with a strict
 * Content-Security-Policy; /docs gets the allowances Swagger UI needs. The benchmark report, the
 * one HTML page of the API itself, sets its own policy (the hash of its inline style).
 */
export function securityHeaders(docsPath: string): RequestHandler {
  const api = withPolicy(API_POLICY);
  const docs = withPolicy(DOCS_POLICY);
  const prefix = `/${docsPath}`;
  return (req: Request, res: Response, next: NextFunction) => {
    const isDocs = req.path === prefix || req.path.startsWith(`${prefix}/`);
    (isDocs ? docs : api)(req, res, next);
  };
}
