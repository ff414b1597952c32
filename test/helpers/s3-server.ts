import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { loadConfig } from '@hashq/config';
// @ts-expect-error s3rver ships no type declarations
import S3rver from 's3rver';

import { type RemoteConfig, remoteConfig } from '../../libs/sources/src/remote-config';
import { stateKeysEnv, testStateKey } from './env';

/**
 * A real S3-compatible server for tests: s3rver (filesystem-backed in `dir`,
 * 127.0.0.1, credentials S3RVER/S3RVER) behind a counting proxy, so a test can
 * see which ranges were asked and how many object bytes went out.
 */
export interface TestS3Server {
  endpoint: string;
  requests: Array<{
    method: string;
    path: string;
    range?: string;
    ifMatch?: string;
    bytes: number;
  }>;
  /** Response body bytes of GET requests since the last reset. */
  bodyBytes: number;
  /** Limits GET bodies to about this many bytes per second (0: no limit), so a test can act mid-object. */
  bytesPerSecond: number;
  reset(): void;
  stop(): Promise<void>;
}

/** The remote-source settings of a client of `server` (path style, its credentials), `env` over them. */
export function s3ClientConfig(
  server: Pick<TestS3Server, 'endpoint'>,
  env: Record<string, string> = {},
): RemoteConfig {
  return remoteConfig(
    loadConfig({
      HASHQ_ALLOW_HOSTS: '127.0.0.1',
      S3_ENDPOINT: server.endpoint,
      S3_FORCE_PATH_STYLE: 'true',
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
      // loadConfig requires a state key; the sources do not use it.
      HASHQ_STATE_KEYS: stateKeysEnv(testStateKey('s3')),
      ...env,
    }),
  );
}

export async function startS3Server(dir: string, buckets: string[]): Promise<TestS3Server> {
  const s3 = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: dir,
    configureBuckets: buckets.map((name) => ({ name })),
  });
  const { port: backendPort } = (await s3.run()) as AddressInfo;
  const state: TestS3Server = {
    endpoint: '',
    requests: [],
    bodyBytes: 0,
    bytesPerSecond: 0,
    reset() {
      state.requests = [];
      state.bodyBytes = 0;
    },
    stop: async () => {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
      await s3.close();
    },
  };
  const proxy: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const entry = {
      method: req.method ?? '',
      path,
      range: req.headers.range,
      ifMatch: req.headers['if-match'] as string | undefined,
      bytes: 0,
    };
    state.requests.push(entry);
    const upstream = request(
      {
        host: '127.0.0.1',
        port: backendPort,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.on('data', (piece: Buffer) => {
          if (req.method === 'GET') {
            state.bodyBytes += piece.length;
            entry.bytes += piece.length;
          }
          res.write(piece);
          if (state.bytesPerSecond > 0) {
            answer.pause();
            setTimeout(
              () => answer.resume(),
              Math.ceil((piece.length / state.bytesPerSecond) * 1000),
            );
          }
        });
        answer.on('end', () => res.end());
      },
    );
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  state.endpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  return state;
}
