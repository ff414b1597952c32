import type { DigestValue, JobOptions } from '@hashq/jobs';
import { type AlgorithmInfo, algorithms, createHasher, Hasher } from '@hashq/native';

import { StateInvalidError } from './job-errors';

/**
 * The hashers of one job, one per algorithm, all fed the same chunks. The
 * algorithms of a chunk run in parallel on the libuv thread pool, so a job
 * with sha256 + sha512 costs about as much as the slower one alone.
 */
export class JobHashers {
  private constructor(private readonly hashers: ReadonlyMap<string, Hasher>) {}

  static create(
    names: readonly string[],
    options: Pick<JobOptions, 'outputLength' | 'customization'>,
  ): JobHashers {
    const info = new Map<string, AlgorithmInfo>(algorithms().map((a) => [a.name, a]));
    const hashers = new Map<string, Hasher>();
    for (const name of names) {
      const algorithm = info.get(name);
      hashers.set(
        name,
        createHasher(name, {
          outputLength: algorithm?.xof ? options.outputLength : undefined,
          customization:
            algorithm?.customizable && options.customization
              ? Buffer.from(options.customization, 'hex')
              : undefined,
        }),
      );
    }
    return new JobHashers(hashers);
  }

  /** Restores every algorithm from its checkpointed state; the states carry the options. */
  static restore(names: readonly string[], states: ReadonlyMap<string, Buffer>): JobHashers {
    const hashers = new Map<string, Hasher>();
    for (const name of names) {
      const state = states.get(name);
      if (!state) throw StateInvalidError.missing(name);
      hashers.set(name, Hasher.restore(state, name));
    }
    return new JobHashers(hashers);
  }

  /** The hashers, in the job's algorithm order (to feed them natively, e.g. updateFromFile). */
  list(): Hasher[] {
    return [...this.hashers.values()];
  }

  async update(chunk: Buffer): Promise<void> {
    await Promise.all([...this.hashers.values()].map((hasher) => hasher.updateAsync(chunk)));
  }

  /** Bytes absorbed; equal for every algorithm of the job. */
  bytesHashed(): number {
    const counts = new Set([...this.hashers.values()].map((hasher) => Number(hasher.bytesHashed)));
    if (counts.size !== 1) throw new Error('hashers of one job disagree on the byte count');
    return [...counts][0];
  }

  /** Serialized states. They hold a plaintext tail of the input: never log them. */
  serialize(): Map<string, Buffer> {
    return new Map(
      [...this.hashers].map(([name, hasher]) => [name, Buffer.from(hasher.serialize())]),
    );
  }

  digests(): Record<string, DigestValue> {
    const out: Record<string, DigestValue> = {};
    for (const [name, hasher] of this.hashers) {
      const digest = Buffer.from(hasher.digest());
      out[name] = { hex: digest.toString('hex'), base64: digest.toString('base64') };
    }
    return out;
  }
}
