/**
 * tus-js-client (the tus project's own client, unchanged) against the digest-session API, and
 * the data the tests upload:
 *
 *   const { url, lastResponse } = await tusUpload(createReadStream(path), { endpoint, metadata, chunkSize });
 *   const upload = seededStream(GiB, 'seed', ['sha256']);   // a Readable of GiB bytes + Node's digests of them
 */
import { createHash, type Hash } from 'node:crypto';
import { Readable } from 'node:stream';

import * as tus from 'tus-js-client';

export const MiB = 1024 * 1024;
export const TUS = { 'Tus-Resumable': '1.0.0' };

export interface TusResult {
  /** The session URL (Location of the POST, resolved). */
  url: string;
  /** Headers of the last answer: the final PATCH (or the POST of an empty upload, the HEAD of a finished one). */
  lastResponse: tus.HttpResponse;
}

/** Metadata of a session: the algorithms and any other keys, as tus-js-client encodes them. */
export function sessionMetadata(
  algorithms: string[],
  extra: Record<string, string> = {},
): Record<string, string> {
  return { algorithms: algorithms.join(','), ...extra };
}

/** Uploads with tus-js-client and resolves on its onSuccess; no retries unless the options give some. */
export function tusUpload(
  source: Buffer | Readable,
  options: Omit<tus.UploadOptions, 'onSuccess' | 'onError'>,
): Promise<TusResult> {
  return new Promise((resolve, reject) => {
    const upload: tus.Upload = new tus.Upload(source, {
      retryDelays: null,
      ...options,
      onSuccess: ({ lastResponse }) => resolve({ url: upload.url as string, lastResponse }),
      onError: reject,
    });
    upload.start();
  });
}

/** A session as `GET /v1/digest-sessions/:id` answers it (the fields these tests read). */
export interface SessionBody {
  status: string;
  digests: Record<string, { hex: string }>;
}

/** Uploads `data` to the API at `apiUrl` with tus-js-client, then answers the session's GET. */
export async function uploadAndGet(
  apiUrl: string,
  data: Buffer,
  options: { chunkSize: number; headers: Record<string, string>; algorithms: string[] },
): Promise<SessionBody> {
  const { url } = await tusUpload(data, {
    endpoint: `${apiUrl}/v1/digest-sessions`,
    chunkSize: options.chunkSize,
    headers: options.headers,
    metadata: sessionMetadata(options.algorithms),
  });
  const answer = await fetch(`${apiUrl}${new URL(url).pathname}`, { headers: options.headers });
  return (await answer.json()) as SessionBody;
}

/**
 * tus-js-client's own Node HTTP stack with every request sent to `origin()` instead of the
 * upload URL's origin: a load balancer in front of several API instances, or the client
 * continuing on another instance after one died.
 */
export function redirectingHttpStack(origin: (method: string) => string): tus.HttpStack {
  const inner = new tus.DefaultHttpStack({});
  return {
    createRequest: (method, url) => {
      const target = new URL(url);
      const to = new URL(origin(method));
      target.host = to.host;
      return inner.createRequest(method, target.toString());
    },
    getName: () => 'RedirectingHttpStack',
  };
}

/**
 * `bytes` pseudo-random bytes from a seed (SHAKE-256 of the seed, one MiB block, each MiB
 * stamped with its index so a wrong offset changes every digest), as a Readable; `digests()`
 * gives Node's crypto of exactly the bytes the stream produced (`observe` sees them too). Memory
 * stays at a few MiB.
 */
export function seededStream(
  bytes: number,
  seed: string,
  algorithms: string[],
  observe: (piece: Buffer) => void = () => undefined,
): { stream: Readable; digests(): Record<string, string> } {
  const block = createHash('shake256', { outputLength: MiB }).update(seed).digest();
  const hashes = new Map<string, Hash>(
    algorithms.map((name) => [name, createHash(name, nodeOptions(name))]),
  );
  let produced = 0;
  const stream = new Readable({
    highWaterMark: MiB,
    read() {
      if (produced >= bytes) return void this.push(null);
      const piece = Buffer.from(block.subarray(0, Math.min(MiB, bytes - produced)));
      if (piece.length >= 4) piece.writeUInt32BE(produced / MiB, 0);
      produced += piece.length;
      for (const hash of hashes.values()) hash.update(piece);
      observe(piece);
      this.push(piece);
    },
  });
  return {
    stream,
    digests: () =>
      Object.fromEntries([...hashes].map(([name, hash]) => [name, hash.digest('hex')])),
  };
}

/** Node's crypto gives shake128 16 bytes and shake256 32 by default; hashq's default is 32 for both. */
export function nodeOptions(name: string): { outputLength: number } | undefined {
  return name.startsWith('shake') ? { outputLength: 32 } : undefined;
}

export function nodeDigest(name: string, data: Buffer): string {
  return createHash(name, nodeOptions(name)).update(data).digest('hex');
}
