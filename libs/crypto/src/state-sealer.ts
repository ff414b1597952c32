import { createCipheriv, createDecipheriv, randomFillSync } from 'node:crypto';

import type { StateKey } from '@hashq/config';

/**
 * What a sealed state is bound to (the AES-GCM associated data): it opens only with the very same
 * values, so a state copied to another owner, algorithm, offset or write is refused.
 */
export interface StateBinding {
  /** The kind of owner, e.g. 'job': a state stored for one kind cannot pass for another's. */
  purpose: string;
  /** The owner's id (a job id). */
  ownerId: string;
  /** The algorithm (or state name) the state belongs to. */
  algorithm: string;
  /** Input bytes absorbed when the state was taken. */
  offset: number;
  /** The write it was sealed by: a job's lease fence. */
  fence: number;
}

/** The clear part of a sealed state. */
export interface SealedHeader {
  version: number;
  keyId: string;
  nonce: Buffer;
}

/** A sealed state that cannot be opened: unknown format, unknown key, altered or bound elsewhere. */
export class SealedStateError extends Error {
  readonly code = 'STATE_INVALID';
  constructor(
    message: string,
    /** The key id the state names, when it could be read. */
    readonly keyId?: string,
  ) {
    super(message);
  }
}

/** "HQse": unlike a plain serialized state ("HQst"), so one is never taken for the other. */
const MAGIC = Buffer.from('HQse', 'latin1');
const VERSION = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** magic, version, key id length */
const FIXED_HEADER = MAGIC.length + 2;
/** Nonces drawn from one fill of the CSPRNG (see NoncePool). */
const POOLED_NONCES = 256;

/**
 * Random nonces, taken from a block of CSPRNG output that is refilled once all of it has been
 * used: one randomFillSync per POOLED_NONCES seals instead of one per seal, each call having a
 * fixed cost of several µs (docs/digest-sessions.md, "Nonces"). Each nonce is copied out and
 * never handed out again.
 */
class NoncePool {
  private readonly block = Buffer.alloc(NONCE_BYTES * POOLED_NONCES);
  private used = this.block.length;

  /** Writes a fresh nonce into `target` at `offset`. */
  take(target: Buffer, offset: number): void {
    if (this.used === this.block.length) {
      randomFillSync(this.block);
      this.used = 0;
    }
    this.block.copy(target, offset, this.used, this.used + NONCE_BYTES);
    this.used += NONCE_BYTES;
  }
}

const nonces = new NoncePool();

/**
 * Seals serialized hash states (they hold a plaintext tail of the input) with AES-256-GCM before
 * they are stored, and opens them when they are loaded. Layout, one byte order, no padding:
 *
 *   "HQse" | version (1) | key id length n (1) | key id (n, ASCII) | nonce (12, random) | ciphertext | tag (16)
 *
 * The associated data is the header (everything before the ciphertext) followed by the binding
 * (StateBinding, length-prefixed strings and 64-bit big-endian integers). The first key seals;
 * every key opens, so keys rotate without downtime: put the new key first, keep the old one until
 * no state sealed with it remains.
 */
export class StateSealer {
  private readonly keys: ReadonlyMap<string, Buffer>;
  private readonly writeKey: StateKey;
  /** The header of every state sealed here, up to the nonce: magic, version, write key id. */
  private readonly headerStart: Buffer;

  constructor(keys: readonly StateKey[]) {
    if (keys.length === 0) throw new Error('StateSealer needs at least one key');
    for (const { id, key } of keys) {
      if (key.length !== 32)
        throw new Error(`state key "${id}" must be 32 bytes, got ${key.length}`);
      if (!/^[\x21-\x7e]{1,255}$/.test(id)) {
        throw new Error(`state key id "${id}" must be 1 to 255 printable ASCII characters`);
      }
    }
    this.keys = new Map(keys.map(({ id, key }) => [id, key]));
    if (this.keys.size !== keys.length) throw new Error('state key ids must be unique');
    this.writeKey = keys[0];
    const id = Buffer.from(this.writeKey.id, 'latin1');
    this.headerStart = Buffer.concat([MAGIC, Buffer.from([VERSION, id.length]), id]);
  }

  /** Id of the key new states are sealed with. */
  get writeKeyId(): string {
    return this.writeKey.id;
  }

  seal(state: Buffer, binding: StateBinding): Buffer {
    const header = Buffer.allocUnsafe(this.headerStart.length + NONCE_BYTES);
    this.headerStart.copy(header);
    nonces.take(header, this.headerStart.length);
    const nonce = header.subarray(-NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.writeKey.key, nonce, {
      authTagLength: TAG_BYTES,
    });
    cipher.setAAD(Buffer.concat([header, encodeBinding(binding)]));
    return Buffer.concat([header, cipher.update(state), cipher.final(), cipher.getAuthTag()]);
  }

  /** The state, or SealedStateError when it was not sealed with this binding by one of the keys. */
  open(sealed: Buffer, binding: StateBinding): Buffer {
    const header = readSealedHeader(sealed);
    const key = this.keys.get(header.keyId);
    if (!key) {
      const held = [...this.keys.keys()].map((id) => `"${id}"`).join(', ');
      throw new SealedStateError(
        `state sealed with key "${header.keyId}", which HASHQ_STATE_KEYS does not list (it has ${held})`,
        header.keyId,
      );
    }
    const headerBytes = FIXED_HEADER + header.keyId.length + NONCE_BYTES;
    const decipher = createDecipheriv('aes-256-gcm', key, header.nonce, {
      authTagLength: TAG_BYTES,
    });
    decipher.setAAD(Buffer.concat([sealed.subarray(0, headerBytes), encodeBinding(binding)]));
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    const ciphertext = sealed.subarray(headerBytes, sealed.length - TAG_BYTES);
    try {
      return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
    } catch {
      throw new SealedStateError(
        `sealed state does not authenticate with key "${header.keyId}": it was altered, or sealed for another ` +
          `${binding.purpose}, algorithm, offset or fence than ${binding.purpose} ${binding.ownerId}, ` +
          `${binding.algorithm}, offset ${binding.offset}, fence ${binding.fence}`,
        header.keyId,
      );
    }
  }
}

/** The clear header of a sealed state (format checks only: nothing is authenticated here). */
export function readSealedHeader(sealed: Buffer): SealedHeader {
  if (sealed.length < FIXED_HEADER || !sealed.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new SealedStateError(
      'not a sealed state (no "HQse" magic): a plaintext state or foreign bytes',
    );
  }
  const version = sealed[MAGIC.length];
  if (version !== VERSION) throw new SealedStateError(`unknown sealed-state version ${version}`);
  const idLength = sealed[MAGIC.length + 1];
  const nonceAt = FIXED_HEADER + idLength;
  if (idLength === 0 || sealed.length < nonceAt + NONCE_BYTES + TAG_BYTES) {
    throw new SealedStateError(`sealed state truncated (${sealed.length} bytes)`);
  }
  return {
    version,
    keyId: sealed.subarray(FIXED_HEADER, nonceAt).toString('latin1'),
    nonce: Buffer.from(sealed.subarray(nonceAt, nonceAt + NONCE_BYTES)),
  };
}

function encodeBinding(binding: StateBinding): Buffer {
  const text = (value: string): Buffer => {
    const bytes = Buffer.from(value, 'utf8');
    if (bytes.length > 0xffff) throw new Error('state binding field longer than 65535 bytes');
    const length = Buffer.alloc(2);
    length.writeUInt16BE(bytes.length);
    return Buffer.concat([length, bytes]);
  };
  const integer = (value: number): Buffer => {
    if (!Number.isSafeInteger(value) || value < 0)
      throw new Error(`state binding integer out of range: ${value}`);
    const bytes = Buffer.alloc(8);
    bytes.writeBigUInt64BE(BigInt(value));
    return bytes;
  };
  return Buffer.concat([
    text(binding.purpose),
    text(binding.ownerId),
    text(binding.algorithm),
    integer(binding.offset),
    integer(binding.fence),
  ]);
}

/**
 * The binding of a job's checkpointed state: the job, the state's name (an algorithm, or e.g.
 * `s3checksum`), the checkpoint offset and the fence of the lease that wrote the checkpoint.
 */
export function jobStateBinding(
  jobId: string,
  algorithm: string,
  offset: number,
  fence: number,
): StateBinding {
  return { purpose: 'job', ownerId: jobId, algorithm, offset, fence };
}

/**
 * The binding of a digest session's state: the session, the algorithm and the upload offset the
 * state was taken at. A session's writes are fenced on that offset, so it is the fence too.
 */
export function sessionStateBinding(
  sessionId: string,
  algorithm: string,
  offset: number,
): StateBinding {
  return { purpose: 'session', ownerId: sessionId, algorithm, offset, fence: offset };
}

/** The binding of a webhook endpoint's signing secret: the endpoint, and nothing that changes. */
export function webhookSecretBinding(endpointId: string): StateBinding {
  return { purpose: 'webhook', ownerId: endpointId, algorithm: 'secret', offset: 0, fence: 0 };
}
