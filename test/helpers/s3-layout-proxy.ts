import { createServer, type IncomingHttpHeaders, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What s3rver does not keep: the part layout of a multipart object and the
 * checksums S3 stores. A loopback proxy in front of the test's S3 server adds
 * them for the objects a test registers, with values the TEST computed (Node's
 * crypto / zlib), so the worker's results are checked against an independent
 * oracle:
 *
 * - `HEAD ?partNumber=n` of a registered multipart object is answered here the
 *   way S3 does: 206, Content-Length = the part's size, Content-Range,
 *   x-amz-mp-parts-count, the object's ETag (412 when If-Match differs).
 * - `HEAD` with `x-amz-checksum-mode: ENABLED` gets the registered
 *   `x-amz-checksum-*` / `x-amz-checksum-type` headers added to s3rver's answer.
 * Everything else passes through unchanged.
 */
export interface S3ObjectExtras {
  etag: string;
  size: number;
  /** Part sizes of a multipart object; absent: the object was uploaded in one request. */
  partSizes?: number[];
  /** e.g. { 'x-amz-checksum-sha256': '…-3', 'x-amz-checksum-type': 'COMPOSITE' } */
  checksumHeaders?: Record<string, string>;
}

export interface S3LayoutProxy {
  endpoint: string;
  /** Key: "/bucket/key" (path style). */
  objects: Map<string, S3ObjectExtras>;
  /** HEAD requests with partNumber answered so far, by path. */
  partHeads: Map<string, number>;
  /** HEAD requests that asked for checksums (x-amz-checksum-mode: ENABLED), by path. */
  checksumHeads: Map<string, number>;
  stop(): Promise<void>;
}

const bump = (counts: Map<string, number>, path: string) =>
  counts.set(path, (counts.get(path) ?? 0) + 1);

export async function startS3LayoutProxy(upstream: string): Promise<S3LayoutProxy> {
  const target = new URL(upstream);
  const state: S3LayoutProxy = {
    endpoint: '',
    objects: new Map(),
    partHeads: new Map(),
    checksumHeads: new Map(),
    stop: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const path = decodeURIComponent(url.pathname);
    const extras = state.objects.get(path);
    const partNumber = url.searchParams.get('partNumber');
    if (req.method === 'HEAD' && extras?.partSizes && partNumber !== null) {
      bump(state.partHeads, path);
      const n = Number(partNumber);
      const ifMatch = req.headers['if-match'];
      if (ifMatch !== undefined && ifMatch !== extras.etag) {
        res.writeHead(412).end();
        return;
      }
      if (!Number.isInteger(n) || n < 1 || n > extras.partSizes.length) {
        res.writeHead(416).end();
        return;
      }
      const start = extras.partSizes.slice(0, n - 1).reduce((a, b) => a + b, 0);
      const size = extras.partSizes[n - 1];
      res.writeHead(206, {
        'content-length': String(size),
        'content-range': `bytes ${start}-${start + size - 1}/${extras.size}`,
        etag: extras.etag,
        'x-amz-mp-parts-count': String(extras.partSizes.length),
        'accept-ranges': 'bytes',
        'last-modified': new Date(0).toUTCString(),
      });
      res.end();
      return;
    }
    const withChecksums =
      req.method === 'HEAD' &&
      req.headers['x-amz-checksum-mode'] === 'ENABLED' &&
      extras?.checksumHeaders;
    if (req.method === 'HEAD' && req.headers['x-amz-checksum-mode'] === 'ENABLED')
      bump(state.checksumHeads, path);
    const forward = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        const headers: IncomingHttpHeaders = { ...answer.headers };
        if (withChecksums && (answer.statusCode ?? 500) < 300)
          Object.assign(headers, extras.checksumHeaders);
        res.writeHead(answer.statusCode ?? 502, headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    res.on('close', () => forward.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}
