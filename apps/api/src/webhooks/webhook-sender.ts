import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

import type { NetGuard } from '@hashq/sources';

/** What one attempt came to: a 2xx answer, another answer, or no answer (error). */
export interface SendOutcome {
  ok: boolean;
  httpStatus: number | null;
  error: string | null;
}

/**
 * POSTs one webhook message. The address is checked as for remote sources (the SSRF guard of
 * HASHQ_ALLOW_HOSTS, on the address actually connected to); redirects are not followed (a 3xx is
 * a failed attempt); one connection per attempt; `timeoutMs` bounds the attempt until the answer's
 * headers, whose body is then read and dropped.
 */
export function postWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  options: { guard: NetGuard; timeoutMs: number },
): Promise<SendOutcome> {
  return new Promise((resolve) => {
    const failed = (err: Error & { code?: string }) =>
      resolve({ ok: false, httpStatus: null, error: `${err.code ?? 'ERROR'}: ${err.message}` });
    let target: URL;
    try {
      target = new URL(url);
      options.guard.assertHostAllowed(target.hostname);
    } catch (err) {
      return failed(err as Error);
    }
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(target, {
      method: 'POST',
      agent: false,
      lookup: options.guard.lookup,
      signal: AbortSignal.timeout(options.timeoutMs),
      headers: {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': 'hashq-webhooks/1',
        ...headers,
      },
    });
    req.on('error', failed);
    req.on('response', (res) => {
      res.resume();
      res.on('error', () => undefined); // the answer is in; its body does not matter
      const status = res.statusCode ?? 0;
      const ok = status >= 200 && status < 300;
      resolve({
        ok,
        httpStatus: status,
        error: ok
          ? null
          : `HTTP ${status}${status >= 300 && status < 400 ? ' (redirects are not followed)' : ''}`,
      });
    });
    req.end(body);
  });
}
