import type { IncomingMessage, ServerResponse } from 'node:http';

import type { HashqConfig } from '@hashq/config';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { json } from 'express';

/** A route prefix whose JSON bodies may be larger than API_JSON_MAX_BYTES. */
export interface JsonBodyLimit {
  path: string;
  maxBytes: number;
}

/**
 * The routes with a JSON limit of their own: batches carry inline manifests. Every other JSON body
 * (jobs, benchmarks, …) is bounded by API_JSON_MAX_BYTES. tus PATCH bodies
 * (application/offset+octet-stream) are never parsed here: they are streamed to the hashers.
 */
export function jsonBodyLimits(config: HashqConfig): JsonBodyLimit[] {
  return [{ path: '/v1/batches', maxBytes: config.batchManifestMaxBytes }];
}

/**
 * body-parser's verify hook, which gets the charset body-parser is about to decode with: JSON is
 * UTF-8 (RFC 8259, section 8.1), so utf-16, utf-7 and the like are a 415 instead of decoded.
 */
function utf8Only(
  _req: IncomingMessage,
  _res: ServerResponse,
  _body: Buffer,
  charset: string,
): void {
  if (charset.toLowerCase() !== 'utf-8') {
    throw Object.assign(
      new Error(`unsupported charset "${charset.toUpperCase()}": JSON bodies are UTF-8`),
      {
        status: 415,
        type: 'charset.unsupported',
      },
    );
  }
}

/**
 * The JSON parsers, the only body parsers of the app: one per route of jsonBodyLimits, then the
 * default one (a body already read by a route's parser is skipped by the next). A body over its
 * limit, counted after decompression, is a 413 PAYLOAD_TOO_LARGE naming the limit.
 */
export function useJsonBodyParsers(app: NestExpressApplication, config: HashqConfig): void {
  for (const { path, maxBytes } of jsonBodyLimits(config)) {
    app.use(path, json({ limit: maxBytes, verify: utf8Only }));
  }
  app.use(json({ limit: config.http.jsonMaxBytes, verify: utf8Only }));
}
