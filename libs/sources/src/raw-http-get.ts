import { connect, type LookupFunction, type Socket } from 'node:net';

/**
 * One plain-HTTP/1.1 GET whose body is read into a few reused buffers (net.Socket `onread`),
 * for large bodies: node:http allocates a new 64 KiB buffer for every socket read, and in a
 * process with a large heap the garbage collection those buffers trigger cost more CPU than
 * receiving and hashing the bytes (README, bench:e2e). The answer must carry a Content-Length
 * (S3 GetObject answers do); one without, or with a transfer coding, is `RawHttpUnsupported` and
 * the caller asks again through node:http. One request per connection (`Connection: close`).
 */
export interface RawGetOptions {
  host: string;
  port: number;
  path: string;
  headers: Record<string, string>;
  lookup: LookupFunction;
  connectTimeoutMs: number;
  idleTimeoutMs: number;
  signal?: AbortSignal;
}

export interface RawResponse {
  statusCode: number;
  /** Names in lower case; a repeated header's values joined with ", ". */
  headers: Record<string, string>;
  /** The body, exactly Content-Length bytes; its pieces stay valid until the next is asked. */
  body: RawBody;
}

/** The answer cannot be read this way (no Content-Length, a transfer coding): ask node:http. */
export class RawHttpUnsupported extends Error {
  override readonly name = 'RawHttpUnsupported';
}

/** Reads are made into SLOTS buffers of SLOT_BYTES in turn; a full ring pauses the socket. */
const SLOTS = 4;
const SLOT_BYTES = 256 * 1024;
const MAX_HEAD_BYTES = 64 * 1024;

export function rawGet(options: RawGetOptions): Promise<RawResponse> {
  return new Promise<RawResponse>((resolve, reject) => {
    const body = new RawBody();
    let answered = false;
    let head: Buffer | null = Buffer.alloc(0);
    const fail = (err: Error) => {
      socket.destroy(err);
    };
    const socket: Socket = connect({
      host: options.host,
      port: options.port,
      lookup: options.lookup,
      onread: {
        buffer: () => body.nextBuffer(),
        callback: (n: number, buf: Uint8Array) => {
          if (head === null) return body.received(Buffer.from(buf.buffer, buf.byteOffset, n));
          // The head: gathered until the blank line, then the rest of this read is body.
          head = Buffer.concat([head, buf.subarray(0, n)]);
          const end = head.indexOf('\r\n\r\n');
          if (end < 0) {
            if (head.length > MAX_HEAD_BYTES) fail(new Error('HTTP answer head too large'));
            return body.received(null);
          }
          let parsed: Omit<RawResponse, 'body'>;
          try {
            parsed = parseHead(head.subarray(0, end).toString('latin1'));
          } catch (err) {
            fail(err as Error);
            return false;
          }
          const rest = head.subarray(end + 4);
          head = null;
          clearTimeout(connectTimer);
          body.start(socket, Number(parsed.headers['content-length']), rest);
          answered = true;
          resolve({ ...parsed, body });
          return body.received(null);
        },
      },
    });
    const connectTimer = setTimeout(
      () => fail(timeoutError('connect', options.connectTimeoutMs)),
      options.connectTimeoutMs,
    );
    socket.setTimeout(options.idleTimeoutMs, () =>
      fail(timeoutError('idle', options.idleTimeoutMs)),
    );
    const onAbort = () => fail(options.signal!.reason as Error);
    if (options.signal?.aborted) onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('close', () => {
      clearTimeout(connectTimer);
      options.signal?.removeEventListener('abort', onAbort);
      // an Error (its stack) is built only when the answer or its body is not whole
      if (!answered) reject(new Error('connection closed before the answer'));
      else if (!body.whole) body.failed(new Error('connection closed before the body ended'));
    });
    socket.on('error', (err) => {
      reject(err);
      body.failed(err);
    });
    let request = `GET ${options.path} HTTP/1.1\r\n`;
    for (const [name, value] of Object.entries(options.headers)) request += `${name}: ${value}\r\n`;
    socket.write(`${request}connection: close\r\n\r\n`, 'latin1');
  });
}

/** Status line and headers; a body this reader cannot frame is RawHttpUnsupported. */
function parseHead(text: string): Omit<RawResponse, 'body'> {
  const lines = text.split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(lines[0]);
  if (!status) throw new Error('not an HTTP/1.1 answer');
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new Error('malformed HTTP header line');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  if (headers['transfer-encoding'] !== undefined || !/^\d{1,15}$/.test(headers['content-length']))
    throw new RawHttpUnsupported('the answer has no plain Content-Length');
  return { statusCode: Number(status[1]), headers };
}

/** A connect or idle timeout, shaped as node:http's and the SDK's (code ETIMEDOUT). */
export function timeoutError(what: string, ms: number): Error {
  return Object.assign(new Error(`S3 ${what} timeout after ${ms} ms`), {
    name: 'TimeoutError',
    code: 'ETIMEDOUT',
  });
}

/**
 * The body as an async iterable of pieces, each a view of a reused slot: valid until the next
 * piece is asked (chunkBody and the ranged reader copy it at once). Reads fill the slots in ring
 * order; when the slot after the one just filled is still queued or held by the reader, the socket
 * pauses until the reader has taken it.
 */
export class RawBody implements AsyncIterable<Buffer> {
  private readonly slots = Array.from({ length: SLOTS }, () => Buffer.allocUnsafeSlow(SLOT_BYTES));
  private readonly queue: Array<{ piece: Buffer; fromSlot: boolean }> = [];
  private fill = 0;
  private inUse = 0;
  private remaining = 0;
  private socket: Socket | null = null;
  private paused = false;
  private error: Error | null = null;
  private done = false;
  private wake: (() => void) | null = null;

  /** Every byte announced arrived. */
  get whole(): boolean {
    return this.done && this.remaining === 0;
  }

  /** The buffer the next read goes into. */
  nextBuffer(): Buffer {
    return this.slots[this.fill];
  }

  /** The answer's head is read: `rest` (a private copy, no slot) is the start of the body. */
  start(socket: Socket, length: number, rest: Buffer): void {
    this.socket = socket;
    this.remaining = length;
    this.push(rest, false);
    if (this.remaining === 0) this.finish();
  }

  /** A read landed in the current slot (`piece`, or null when it held no body bytes); false pauses. */
  received(piece: Buffer | null): boolean {
    if (piece !== null && this.push(piece, true)) this.fill = (this.fill + 1) % SLOTS;
    if (this.remaining === 0 && this.socket) this.finish();
    this.paused = this.inUse >= SLOTS - 1 && !this.done;
    return !this.paused;
  }

  /** Queues the part of `piece` within Content-Length; true when it holds its slot now. */
  private push(piece: Buffer, fromSlot: boolean): boolean {
    const take = piece.subarray(0, Math.min(piece.length, this.remaining));
    if (this.done || take.length === 0) return false;
    this.remaining -= take.length;
    this.queue.push({ piece: take, fromSlot });
    if (fromSlot) this.inUse++;
    this.wake?.();
    return fromSlot;
  }

  /** Every byte announced arrived: the connection is not needed any more. */
  private finish(): void {
    this.done = true;
    this.socket?.destroy();
    this.wake?.();
  }

  failed(err: Error): void {
    if (this.done) return;
    this.error ??= err;
    this.wake?.();
  }

  /** Stops reading (the reader is done, early or not); frees the connection. */
  destroy(): void {
    if (!this.done) this.error ??= new Error('body destroyed');
    this.done = true;
    this.queue.length = 0;
    this.socket?.destroy();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Buffer> {
    let held = false;
    try {
      for (;;) {
        if (held) this.release();
        held = false;
        const next = this.queue.shift();
        if (next) {
          held = next.fromSlot;
          yield next.piece;
          continue;
        }
        if (this.error) throw this.error;
        if (this.done) return;
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = null;
      }
    } finally {
      this.destroy();
    }
  }

  /** The reader took the oldest piece: its slot is free again; a paused socket reads on. */
  private release(): void {
    this.inUse--;
    if (this.paused && this.inUse < SLOTS - 1) {
      this.paused = false;
      this.socket?.resume();
    }
  }
}
