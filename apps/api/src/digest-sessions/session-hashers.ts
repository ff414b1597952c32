import type { DigestValue } from '@hashq/jobs';
import { createHasher, findAlgorithm, Hasher } from '@hashq/native';

import type { DigestSessionOptions } from './digest-sessions.repository';

/**
 * The hashers of one session, one per algorithm, in the order of its `algorithms`; the stored
 * states are this order too. A chunk goes to all of them at once on libuv's thread pool.
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

  /** Absorbs the chunks, in order, on the thread pool (each hasher reads them, none copies). */
  updateChunksAsync(chunks: Buffer[]): Promise<unknown> {
    return Promise.all(this.hashers.map((hasher) => hasher.updateChunksAsync(chunks)));
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
