import { HASHQ_LOGGER } from '@hashq/config';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { Logger } from 'pino';

import { hashSecret, parseKey, secretMatches } from './api-key';
import { KeysRepository, type StoredApiKey } from './keys.repository';
import { type Principal, SCOPES } from './principal';

/** How long a key read from PostgreSQL is trusted: a revocation reaches every instance within this. */
export const KEY_CACHE_MS = 5_000;
/** last_used_at is written at most this often per key. */
export const LAST_USED_SECONDS = 60;
const MAX_CACHED_KEYS = 10_000;
/** Compared against when the id is unknown, so an unknown id costs what a wrong secret costs. */
const DECOY_HASH = hashSecret('0000000000000000', 'decoy');

interface Cached {
  key: StoredApiKey | null;
  until: number;
}

/**
 * Turns a presented key into a Principal. A key read from PostgreSQL (or found missing) is kept
 * KEY_CACHE_MS in this process, so a request costs one SHA-256 and no database round trip; the
 * secret is checked on every request against the cached hash. Expiry is checked on every request;
 * a revocation by this instance drops the entry at once, one by another instance (or the CLI)
 * takes effect here within KEY_CACHE_MS.
 */
@Injectable()
export class KeyVerifier implements OnModuleDestroy {
  private readonly cache = new Map<string, Cached>();
  private readonly touched = new Map<string, number>();
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly keys: KeysRepository,
    @Inject(HASHQ_LOGGER) private readonly logger: Logger,
  ) {}

  /** The key's Principal, or null for a malformed, unknown, wrong, expired or revoked key. */
  async verify(token: string): Promise<Principal | null> {
    const parsed = parseKey(token);
    if (!parsed) return null;
    const key = await this.lookup(parsed.id);
    const matches = secretMatches(parsed.id, parsed.secret, key?.secretHash ?? DECOY_HASH);
    if (!key || !matches || key.revokedAt) return null;
    if (key.expiresAt && key.expiresAt.getTime() <= Date.now()) return null;
    this.recordUse(key.id);
    const scopes = key.scopes.filter((scope) => (SCOPES as readonly string[]).includes(scope));
    return { tenantId: key.tenantId, keyId: key.id, scopes };
  }

  /** Forgets a key at once (this instance revoked it). */
  forget(id: string): void {
    this.cache.delete(id);
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }

  private async lookup(id: string): Promise<StoredApiKey | null> {
    const now = Date.now();
    const cached = this.cache.get(id);
    if (cached && cached.until > now) return cached.key;
    const key = await this.keys.findWithSecret(id);
    if (this.cache.size >= MAX_CACHED_KEYS) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(id, { key, until: now + KEY_CACHE_MS });
    return key;
  }

  private recordUse(id: string): void {
    const now = Date.now();
    if ((this.touched.get(id) ?? -Infinity) > now - LAST_USED_SECONDS * 1000) return;
    if (this.touched.size >= MAX_CACHED_KEYS) this.touched.clear();
    this.touched.set(id, now);
    const write = this.keys
      .touch(id, LAST_USED_SECONDS)
      .catch((err: unknown) =>
        this.logger.warn({ keyId: id, err: (err as Error).message }, 'last_used_at not written'),
      )
      .finally(() => this.pending.delete(write));
    this.pending.add(write);
  }
}
