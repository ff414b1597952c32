import type { DigestValue } from '@hashq/jobs';
import { createHasher, findAlgorithm, Hasher } from '@hashq/native';

import type { DigestSessionOptions } from './digest-sessions.repository';

/**
 * The hashers of one session, one per algorithm, in the order of its `algorithms`; the stored
 * states are this order too. A chunk is fed to all of them: each hashes on libuv's thread pool.
 */
export class SessionHashers {
  private constructor(private readonly hashers: Hasher[]) {}

  static create(algorithms: readonly string[], options: DigestSessionOptions): SessionHashers {
    const customization =
      options.customization === undefined ? undefined : Buffer.from(options.customization, 'hex');
    return new SessionHashers(
      algorithms.map((name) => {
        const info = findAlgorithm(name);
        return createHasher(name, {
          outputLength: info?.xof ? options.outputLength : undefined,
          customization: info?.customizable ? customization : undefined,
        });
      }),
    );
  }

  /** The states carry the options (output length, customization). */
  static restore(algorithms: readonly string[], states: readonly Buffer[]): SessionHashers {
    return new SessionHashers(algorithms.map((name, i) => Hasher.restore(states[i], name)));
  }

  get count(): number {
    return this.hashers.length;
  }

  /** Absorbs a small chunk at once on this thread (HashPipeline decides what is small). */
  update(chunk: Buffer): void {
    for (const hasher of this.hashers) hasher.update(chunk);
  }

  /** Queues a chunk for every hasher (Hasher.feed, no copy); returns the largest backlog. */
  feed(chunk: Buffer): number {
    let backlog = 0;
    for (const hasher of this.hashers) backlog = Math.max(backlog, hasher.feed(chunk));
    return backlog;
  }

  /** Resolves once every hasher has at most `bytes` fed bytes left to absorb. */
  fedBelow(bytes: number): Promise<unknown> {
    return Promise.all(this.hashers.map((hasher) => hasher.fedBelow(bytes)));
  }

  /** Resolves once every hasher has absorbed all it was fed. */
  flushFed(): Promise<unknown> {
    return Promise.all(this.hashers.map((hasher) => hasher.flushFed()));
  }

  /** Serialized states. They hold a plaintext tail of the input: never log them. */
  serialize(): Buffer[] {
    return this.hashers.map((hasher) => hasher.serialize());
  }

  digests(): Record<string, DigestValue> {
    return Object.fromEntries(
      this.hashers.map((hasher) => {
        const digest = hasher.digest();
        return [
          hasher.algorithm,
          { hex: digest.toString('hex'), base64: digest.toString('base64') },
        ];
      }),
    );
  }
}
