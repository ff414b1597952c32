import { randomUUID } from 'node:crypto';
import { type Server, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';

import type { Logger } from 'pino';

import { type ApiErrorCode, errorBody } from './api-error';
import { REQUEST_ID_HEADER } from './request-id.middleware';

/** Node's own refusals (lib/_http_server.js), by the parser's error code; anything else is a 400. */
const REFUSALS: Record<string, { status: number; code: ApiErrorCode; message: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    code: 'HEADERS_TOO_LARGE',
    message: 'request line and headers exceed 16 kB',
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    code: 'REQUEST_TIMEOUT',
    message: 'the request did not arrive in time',
  },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: {
    status: 413,
    code: 'PAYLOAD_TOO_LARGE',
    message: 'chunk extensions too large',
  },
};
const CLOSE_GRACE_MS = 5000;

/** The response of the request a socket serves, once Express has it (Node's socket._httpMessage). */
interface InFlightResponse {
  headersSent?: boolean;
  locals?: { requestId?: unknown };
}
const MALFORMED = {
  status: 400,
  code: 'MALFORMED_REQUEST' as const,
  message: 'the request is not valid HTTP/1.1',
};

/**
 * Requests Node's HTTP parser refuses (a URL over 16 kB, a control character in a header, …)
 * never reach Express: Node answers them with a bare status line. With this 'clientError'
 * listener they get the API's JSON error format, with Node's status, a code and a request id
 * (logged with the refusal), and the connection is closed as Node would.
 */
export function answerClientErrorsInJson(server: Server, logger: Logger): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    // As Node does: nothing to answer on a reset socket, or after a response has begun on it.
    const inFlight = (socket as Socket & { _httpMessage?: InFlightResponse })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const { status, code, message } = REFUSALS[err.code ?? ''] ?? MALFORMED;
    // A request timed out while its body arrived already has its id; one refused earlier gets one.
    const known = inFlight?.locals?.requestId;
    const requestId = typeof known === 'string' ? known : randomUUID();
    const reason = err.code ?? null;
    const { error } = errorBody(code, message, { reason });
    const body = JSON.stringify({ error: { ...error, requestId } });
    logger.info({ requestId, status, code, reason }, 'request refused by the HTTP parser');
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `${REQUEST_ID_HEADER}: ${requestId}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    // end() lets the answer reach the client; a client that never closes its side is cut off.
    setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
  });
}
