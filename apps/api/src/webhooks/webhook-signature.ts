import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks (standardwebhooks.com, spec v1): a secret is `whsec_` + base64 of random bytes;
 * a message is signed with HMAC-SHA256 under those bytes over `<webhook-id>.<webhook-timestamp>.<body>`,
 * sent as `webhook-signature: v1,<base64>`. The receivers' libraries (npm `standardwebhooks`, and
 * its ports) verify exactly this.
 */
const PREFIX = 'whsec_';

/** A new secret: 32 random bytes (the spec asks for 24 to 64). */
export function newWebhookSecret(): string {
  return PREFIX + randomBytes(32).toString('base64');
}

/** The headers of one message: its id, the time it is sent (Unix seconds) and the signature. */
export function signWebhook(
  secret: string,
  id: string,
  timestampSeconds: number,
  body: string,
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const key = Buffer.from(secret.slice(PREFIX.length), 'base64');
  const signature = createHmac('sha256', key)
    .update(`${id}.${timestampSeconds}.`)
    .update(body)
    .digest('base64');
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': `v1,${signature}`,
  };
}
