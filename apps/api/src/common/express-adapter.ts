import { createServer, IncomingMessage, ServerResponse } from 'node:http';

import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express } from 'express';

/**
 * Nest's express adapter, whose HTTP server creates each request and response with express's
 * prototypes from the start (Node's `IncomingMessage` and `ServerResponse` server options).
 * Express gives them per request with Object.setPrototypeOf, which in V8 leaves every req and
 * res with a map (hidden class) of its own: each property express, the router and Nest add
 * afterwards copies that map and its descriptors. Those copies live as long as the request, so
 * with many requests in flight they outlive young-generation GCs (docs/digest-sessions.md, "GC
 * pauses"). Here `app.request` and `app.response` are the prototypes of two subclasses of Node's
 * classes, chained to express's own: requests are born with them, express's Object.setPrototypeOf
 * changes nothing, and all requests share their maps (subclasses, not constructors that call
 * Node's: V8 sizes a subclass's objects for all the fields of the chain, so they keep fast
 * properties).
 */
export class ExpressPrototypesAdapter extends ExpressAdapter {
  override initHttpServer(options: NestApplicationOptions): void {
    if (options.httpsOptions || options.forceCloseConnections || options.return503OnClosing) {
      super.initHttpServer(options); // not used by hashq: Nest's own server
      return;
    }
    const app = this.getInstance<Express>();
    class Request extends IncomingMessage {}
    class Response extends ServerResponse {}
    Object.setPrototypeOf(Request.prototype, app.request);
    Object.setPrototypeOf(Response.prototype, app.response);
    app.request = Request.prototype as Express['request'];
    app.response = Response.prototype as Express['response'];
    this.httpServer = createServer({ IncomingMessage: Request, ServerResponse: Response }, app);
  }
}
