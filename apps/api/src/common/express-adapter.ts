import { createServer, IncomingMessage, ServerResponse } from 'node:http';

import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express } from 'express';

/**
 * A constructor like `base` (an ES5-style Node constructor) whose objects are born with
 * `prototype`: what express would give them later with Object.setPrototypeOf.
 */
function bornWith<T extends object>(base: T, prototype: object): T {
  function Born(this: unknown, ...args: unknown[]): void {
    (base as unknown as (...args: unknown[]) => void).apply(this, args);
  }
  Born.prototype = prototype;
  return Born as unknown as T;
}

/**
 * Nest's express adapter, whose HTTP server creates each request and response with express's
 * prototypes (`app.request`, `app.response`) from the start (Node's `IncomingMessage` and
 * `ServerResponse` server options). Express sets them per request with Object.setPrototypeOf,
 * which in V8 gives every req and res a map (hidden class) of its own: each property express,
 * the router and Nest add afterwards then copies that map and its descriptors. Those copies live
 * as long as the request, so with many requests in flight they outlive young-generation GCs
 * (~10 of the ~26 KB per request promoted and then dropped, docs/digest-sessions.md "GC pauses").
 * Born with the prototype, express's Object.setPrototypeOf changes nothing and all requests
 * share their maps.
 */
export class ExpressPrototypesAdapter extends ExpressAdapter {
  override initHttpServer(options: NestApplicationOptions): void {
    if (options.httpsOptions || options.forceCloseConnections || options.return503OnClosing) {
      super.initHttpServer(options); // not used by hashq: Nest's own server
      return;
    }
    const app = this.getInstance<Express>();
    this.httpServer = createServer(
      {
        IncomingMessage: bornWith(IncomingMessage, app.request),
        ServerResponse: bornWith(ServerResponse, app.response),
      },
      app,
    );
  }
}
