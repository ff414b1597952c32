import type { Server } from 'node:http';

import type { HttpServerSettings } from '@hashq/config';

/** How often Node looks for requests past their timeouts; it reads this when the server listens. */
const CHECK_INTERVAL_MS = 1000;

/**
 * Time bounds of the API's HTTP server, so a slow or silent client cannot hold a connection: the
 * request line and headers within headersTimeoutMs, the whole request within requestTimeoutMs
 * (both answered 408 REQUEST_TIMEOUT by answerClientErrorsInJson, then closed), an idle kept-alive
 * connection closed after keepAliveTimeoutMs. Node checks the first two every
 * connectionsCheckingInterval (30 s by default): once a second here, so they hold within ~1 s.
 */
export function boundHttpServer(server: Server, settings: HttpServerSettings): void {
  server.headersTimeout = settings.headersTimeoutMs;
  server.requestTimeout = settings.requestTimeoutMs;
  server.keepAliveTimeout = settings.keepAliveTimeoutMs;
  Object.assign(server, { connectionsCheckingInterval: CHECK_INTERVAL_MS });
}
