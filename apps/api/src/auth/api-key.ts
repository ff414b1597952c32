import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * An API key is `hq_<id>_<secret>`: the id is 8 random bytes in hex (16 characters, stored in the
 * clear: it names the key in lists and logs), the secret 32 random bytes in base64url (43
 * characters, shown once). Fixed lengths make the split unambiguous although base64url has `_`.
 *
 * Only SHA-256 over the id and the secret is stored. A slow password hash (scrypt, argon2) exists
 * to make guessing low-entropy passwords expensive; a 256-bit random secret cannot be guessed
 * whatever the hash costs, so a fast hash loses nothing and keeps a verification at microseconds.
 * Hashing the id in binds a stored hash to its row (copying it to another id opens nothing).
 */
export const API_KEY_PATTERN = /^hq_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

export interface IssuedKey {
  id: string;
  /** The whole key: give it to the caller once, never store it. */
  key: string;
  secretHash: Buffer;
}

export function issueKey(): IssuedKey {
  const id = randomBytes(8).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  return { id, key: `hq_${id}_${secret}`, secretHash: hashSecret(id, secret) };
}

export function hashSecret(id: string, secret: string): Buffer {
  return createHash('sha256').update(`hashq-api-key:v1:${id}:${secret}`).digest();
}

/** The id and secret of a well-formed key, or null. */
export function parseKey(key: string): { id: string; secret: string } | null {
  const match = API_KEY_PATTERN.exec(key);
  return match ? { id: match[1], secret: match[2] } : null;
}

/** Hashes compared in constant time (both are 32 bytes; a stored hash of another size never matches). */
export function secretMatches(id: string, secret: string, stored: Buffer): boolean {
  const presented = hashSecret(id, secret);
  return stored.length === presented.length && timingSafeEqual(presented, stored);
}

/** The token of `Authorization: Bearer <token>`, or null for any other form. */
export function bearerToken(header: string | undefined): string | null {
  const match = header === undefined ? null : /^Bearer +(\S+) *$/i.exec(header);
  return match ? match[1] : null;
}
