import { connect, type LookupFunction, type Socket } from 'node:net';

import { setRecvLowWater } from '@hashq/native';

/**
 * One plain-HTTP/1.1 GET whose body is read in place into a few reused chunk-sized buffers
 * (net.Socket `onread`), for large bodies: node:http allocates a new 64 KiB buffer for every
 * socket read, and in a process with a large heap the garbage collection those buffers trigger
 * cost more CPU than receiving and hashing the bytes; reading straight into the chunks the hasher
 * takes also saves a copy and a promise per read (README, bench:e2e). The answer must carry a
 * Content-Length (S3 GetObject answers do); one without, or with a transfer coding, is
 * `RawHttpUnsupported` and the caller asks again through node:http. One request per connection
 * (`Connection: close`).
 */
export interface RawGetOptions {
  host: string;
  port: number;
  path: string;
  headers: Record<string, string>;
  lookup: LookupFunction;
  connectTimeoutMs: number;
  idleTimeoutMs: number;
  /** Size of the body's pieces (the reader's chunk size): each is filled in place by the socket. */
  pieceBytes: number;
  /** Told the length of every socket read of the body as it lands, once the body is being read. */
  onBytes?: (count: number) => void;
  signal?: AbortSignal;
}

export interface RawResponse {
  statusCode: number;
  /** Names in lower case; a repeated header's values joined with ", ". */
  headers: Record<string, string>;
  /** The body, exactly Content-Length bytes, in pieces of pieceBytes (RawBody). */
  body: RawBody;
}

/** The answer cannot be read this way (no Content-Length, a transfer coding): ask node:http. */
export class RawHttpUnsupported extends Error {
  override readonly name = 'RawHttpUnsupported';
}

/**
 * Pieces are filled in SLOTS buffers in turn: one held by the reader, two read ahead; a full ring
 * pauses the socket.
 */
const SLOTS = 3;
/** Reads before the head is parsed go to a small buffer; body bytes among them are copied once. */
const HEAD_READ_BYTES = 16 * 1024;
const MAX_HEAD_BYTES = 64 * 1024;
/**
 * A body of 4 marks or more is read with this receive low-water mark (SO_RCVLOWAT): the socket
 * wakes the reader once 4 MiB are queued, not for every ~150 KiB a loopback server sends, which
 * halves the reader's CPU and lowers the server's (docs/sources.md).
 */
const LOW_WATER_BYTES = 4 * 1024 * 1024;

export function rawGet(options: RawGetOptions): Promise<RawResponse> {
  return new Promise<RawResponse>((resolve, reject) => {
    const body = new RawBody(options.pieceBytes, options.onBytes);
    let answered = false;
    let head: Buffer | null = Buffer.alloc(0);
    const headRead = Buffer.allocUnsafe(HEAD_READ_BYTES);
    const fail = (err: Error) => {
      socket.destroy(err);
    };
    const socket: Socket = connect({
      host: options.host,
      port: options.port,
      lookup: options.lookup,
      onread: {
        buffer: () => (head === null && !body.done ? body.nextBuffer() : headRead),
        callback: (n: number, buf: Uint8Array) => {
          if (head === null) return body.received(n);
          // The head: gathered until the blank line, then the rest of this read is body.
          head = Buffer.concat([head, buf.subarray(0, n)]);
          const end = head.indexOf('\r\n\r\n');
          if (end < 0) {
            if (head.length > MAX_HEAD_BYTES) fail(new Error('HTTP answer head too large'));
            return true;
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
          answered = true;
          resolve({ ...parsed, body });
          return body.start(socket, Number(parsed.headers['content-length']), rest);
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
 * The body as an async iterable of pieces of pieceBytes (the last one shorter), each a reused slot
 * the socket read into in place: a piece stays valid until two more have been asked (the Source
 * contract, so chunkBody passes it on without a copy). When the slot after the one just filled is
 * still queued or held by the reader, the socket pauses until the reader has taken a piece more.
 */
export class RawBody implements AsyncIterable<Buffer> {
  private readonly slots: Buffer[] = [];
  private slotBytes = 1;
  private readonly queue: Buffer[] = [];
  /** The slot being filled, and its bytes so far. */
  private fill = 0;
  private filled = 0;
  /** Slots queued or held by the reader. */
  private busy = 0;
  private remaining = 0;
  /** Bytes landed before the reader first asked: told to onBytes then (a read starts there). */
  private unreported: number | null = 0;
  /** The socket's receive low-water mark, when one is set. */
  private lowWater = 0;
  private socket: Socket | null = null;
  private paused = false;
  private error: Error | null = null;
  private ended = false;
  private wake: (() => void) | null = null;

  constructor(
    private readonly pieceBytes: number,
    private readonly onBytes?: (count: number) => void,
  ) {}

  /** No more bytes will land: whole, failed or destroyed. */
  get done(): boolean {
    return this.ended;
  }

  /** Every byte announced arrived. */
  get whole(): boolean {
    return this.ended && this.remaining === 0;
  }

  /** Where the next read goes: the rest of the slot being filled, no further than the body's end. */
  nextBuffer(): Buffer {
    const slot = (this.slots[this.fill] ??= Buffer.allocUnsafeSlow(this.slotBytes));
    return slot.subarray(this.filled, Math.min(this.slotBytes, this.filled + this.remaining));
  }

  /**
   * The answer's head is read: `rest` (bytes read with it) is the start of the body. False when
   * the socket must pause.
   */
  start(socket: Socket, length: number, rest: Buffer): boolean {
    this.socket = socket;
    this.remaining = length;
    if (length >= 4 * LOW_WATER_BYTES) this.setLowWater(LOW_WATER_BYTES);
    // at least a head read's size: `rest` fits in the first slot
    this.slotBytes = Math.max(1, Math.min(Math.max(this.pieceBytes, HEAD_READ_BYTES), length));
    const first = rest.subarray(0, Math.min(rest.length, length));
    first.copy(this.nextBuffer());
    return this.received(first.length);
  }

  /** `count` bytes landed where nextBuffer() said; false pauses the socket. */
  received(count: number): boolean {
    if (count > 0 && !this.ended) {
      if (this.unreported === null) this.onBytes?.(count);
      else this.unreported += count;
      this.filled += count;
      this.remaining -= count;
      // fewer bytes to come than the mark: the reader is woken by any byte again
      if (this.remaining < this.lowWater) this.setLowWater(1);
      if (this.filled === this.slotBytes || this.remaining === 0) this.complete();
    }
    if (this.remaining === 0 && this.socket) this.finish();
    this.paused = this.busy === SLOTS && !this.ended;
    return !this.paused;
  }

  /** A mark on the socket's descriptor (Node's handle); without one the socket reads as it is. */
  private setLowWater(bytes: number): void {
    const fd = (this.socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
    if (typeof fd !== 'number' || fd < 0) return;
    this.lowWater = setRecvLowWater(fd, bytes) === 0 && bytes > 1 ? bytes : 0;
  }

  /** The slot being filled is a piece: queued for the reader; the next slot is filled next. */
  private complete(): void {
    this.queue.push(this.slots[this.fill].subarray(0, this.filled));
    this.busy++;
    this.fill = (this.fill + 1) % SLOTS;
    this.filled = 0;
    this.wake?.();
  }

  /** Every byte announced arrived: the connection is not needed any more. */
  private finish(): void {
    this.ended = true;
    this.socket?.destroy();
    this.wake?.();
  }

  failed(err: Error): void {
    if (this.ended) return;
    this.error ??= err;
    this.ended = true;
    this.wake?.();
  }

  /** Stops reading (the reader is done, early or not); frees the connection. */
  destroy(): void {
    if (!this.ended) this.error ??= new Error('body destroyed');
    this.ended = true;
    this.queue.length = 0;
    this.socket?.destroy();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Buffer> {
    let held = 0; // pieces yielded and not given back
    if (this.unreported) this.onBytes?.(this.unreported);
    this.unreported = null;
    try {
      for (;;) {
        const piece = this.queue.shift();
        if (piece) {
          yield piece;
          // One more piece asked: the one yielded before this one is free now.
          if (++held === 2) {
            held--;
            this.release();
          }
          continue;
        }
        if (this.error) throw this.error;
        if (this.ended) return;
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = null;
      }
    } finally {
      this.destroy();
    }
  }

  /** The reader gave back its oldest piece: its slot is free again; a paused socket reads on. */
  private release(): void {
    this.busy--;
    if (this.paused && this.busy < SLOTS) {
      this.paused = false;
      this.socket?.resume();
    }
  }
}
