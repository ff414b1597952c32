import {
  type DigestValue,
  type LeasedJob,
  S3_CHECKSUM_ALGORITHMS,
  type S3ChecksumValue,
} from '@hashq/jobs';
import { createHasher, Hasher } from '@hashq/native';
import {
  type OpenedSource,
  packPartSizes,
  type S3ObjectLayout,
  S3Source,
  sameS3Checksum,
  type Source,
  SourceError,
  unpackPartSizes,
  unquoteEtag,
} from '@hashq/sources';

import type { CheckpointStore } from './checkpoint-store';
import { type JobError, StateInvalidError } from './job-errors';
import type { JobHashers } from './job-hashers';

/**
 * The job option `s3Checksum`: S3's own form of each S3-supported digest.
 *
 * - Object uploaded in one request: base64 of the full digest (md5: its hex, the ETag).
 * - Multipart object (N parts, sizes from S3 at the job's first start):
 *   COMPOSITE = base64(H(raw digest of part 1 || … || part N)) + "-N" for sha1,
 *   sha256, crc32, crc32c; md5 → the multipart ETag hex(md5(part md5s)) + "-N";
 *   FULL_OBJECT (the full digest) for crc64nvme, and for crc32/crc32c when the
 *   checksum S3 stores is FULL_OBJECT.
 *
 * Per-part hashers run beside the job's hashers on the same chunks (a part
 * boundary inside a chunk splits it); a finished part's digest goes straight
 * into an outer hasher, so memory stays a few hash states whatever the part
 * count. The layout, the stored checksums and these states are checkpointed
 * with the job's states (job_states row `s3checksum`), so a resumed job
 * continues with the same parts.
 */

/** Key of the layout + per-part states in the job's checkpointed states (not an algorithm name). */
export const S3_CHECKSUM_STATE = 's3checksum';

/** What HashRun needs from the job's hashers. */
export type RunHashers = Pick<JobHashers, 'update' | 'serialize' | 'digests'>;

interface Plan {
  algorithm: string;
  /** Hashed part by part (composite / multipart ETag); otherwise the full digest is the value. */
  composite: boolean;
  part?: Hasher;
  outer?: Hasher;
}

interface SavedState {
  v: 1;
  etag: string | null;
  versionId: string | null;
  size: number;
  parts: Array<[number, number]> | null;
  stored: S3ObjectLayout['stored'];
  storedType: S3ObjectLayout['storedType'];
  position: number;
  partIndex: number;
  hashers: Record<string, [string, string]>;
}

/** The S3 checksum part of a run, prepared before the object is opened. */
export interface S3ChecksumSetup {
  /** The job's hashers extended by the S3 forms; the layout must describe the object being read. */
  attach(base: JobHashers, opened: OpenedSource): RunHashers;
}

/**
 * Null when the job does not ask for `s3Checksum`. At the job's first start the
 * part layout and stored checksums are read from S3 here, before the GET (so the
 * object stream does not sit idle during the part HEADs); a resumed job takes
 * them from its checkpointed state instead.
 */
export async function prepareS3Checksum(
  job: LeasedJob,
  source: Source,
  store: Pick<CheckpointStore, 'loadStates'>,
): Promise<S3ChecksumSetup | null> {
  if (!job.options.s3Checksum) return null;
  const algorithms = job.algorithms.filter((name) => S3_CHECKSUM_ALGORITHMS.includes(name));
  if (!(source instanceof S3Source) || algorithms.length === 0) {
    throw new SourceError(
      'SOURCE_UNSUPPORTED',
      's3Checksum needs an s3 source and an S3 checksum algorithm',
      {
        algorithms: job.algorithms,
      },
    );
  }
  if (job.checkpointOffset === 0) {
    const layout = await source.objectLayout(null);
    return {
      attach: (base, opened) => {
        if (layout.etag !== (opened.version.etag ?? null) || layout.size !== opened.size) {
          throw new SourceError(
            'SOURCE_CHANGED',
            'the object changed between reading its part layout and its bytes',
            {
              layout: { etag: layout.etag, size: layout.size },
              actual: opened.version,
            },
          );
        }
        return S3ChecksumHashers.create(base, algorithms, layout);
      },
    };
  }
  const saved = (await store.loadStates(job)).get(S3_CHECKSUM_STATE);
  if (!saved) throw StateInvalidError.missing(S3_CHECKSUM_STATE);
  return {
    attach: (base, opened) =>
      S3ChecksumHashers.restore(base, algorithms, saved, opened, job.checkpointOffset),
  };
}

/** The job error for values that differ from the checksum S3 stores (digests are kept). */
export function s3ChecksumError(digests: Record<string, DigestValue>): JobError | undefined {
  const mismatches: Record<string, { stored: string | undefined; computed: string; type: string }> =
    {};
  for (const [algorithm, digest] of Object.entries(digests)) {
    if (digest.s3?.verified === false) {
      mismatches[algorithm] = {
        stored: digest.s3.stored,
        computed: digest.s3.value,
        type: digest.s3.type,
      };
    }
  }
  const names = Object.keys(mismatches);
  if (names.length === 0) return undefined;
  return {
    code: 'S3_CHECKSUM_MISMATCH',
    message: `the object's bytes do not match the checksum S3 stores for ${names.join(', ')}`,
    details: mismatches,
  };
}

export class S3ChecksumHashers implements RunHashers {
  private readonly partEnds: number[];

  private constructor(
    private readonly base: JobHashers,
    private readonly layout: S3ObjectLayout,
    private readonly plans: Plan[],
    private position: number,
    private partIndex: number,
  ) {
    let end = 0;
    this.partEnds = (layout.partSizes ?? []).map((size) => (end += size));
  }

  static create(base: JobHashers, algorithms: string[], layout: S3ObjectLayout): S3ChecksumHashers {
    const plans = algorithms.map((algorithm): Plan => {
      const composite = S3ChecksumHashers.isComposite(algorithm, layout);
      return composite
        ? { algorithm, composite, part: createHasher(algorithm), outer: createHasher(algorithm) }
        : { algorithm, composite };
    });
    const run = new S3ChecksumHashers(base, layout, plans, 0, 0);
    run.closeFinishedParts(); // a multipart object may start with empty parts
    return run;
  }

  static restore(
    base: JobHashers,
    algorithms: string[],
    saved: Buffer,
    opened: OpenedSource,
    offset: number,
  ): S3ChecksumHashers {
    try {
      const state = JSON.parse(saved.toString('utf8')) as SavedState;
      if (state.v !== 1) throw new Error(`unknown version ${String(state.v)}`);
      if (
        state.etag !== (opened.version.etag ?? null) ||
        state.size !== opened.size ||
        state.position !== offset
      ) {
        throw new Error('it belongs to another version of the object or another offset');
      }
      const layout: S3ObjectLayout = {
        etag: state.etag,
        versionId: state.versionId,
        size: state.size,
        partSizes: state.parts === null ? null : unpackPartSizes(state.parts),
        stored: state.stored,
        storedType: state.storedType,
      };
      const plans = algorithms.map((algorithm): Plan => {
        const composite = S3ChecksumHashers.isComposite(algorithm, layout);
        if (!composite) return { algorithm, composite };
        const states = state.hashers[algorithm];
        if (!states) throw new Error(`no part state for ${algorithm}`);
        return {
          algorithm,
          composite,
          part: Hasher.restore(Buffer.from(states[0], 'base64'), algorithm),
          outer: Hasher.restore(Buffer.from(states[1], 'base64'), algorithm),
        };
      });
      return new S3ChecksumHashers(base, layout, plans, state.position, state.partIndex);
    } catch (err) {
      throw StateInvalidError.missing(`${S3_CHECKSUM_STATE} (unusable: ${(err as Error).message})`);
    }
  }

  /** Which form S3 uses for this algorithm on this object. */
  private static isComposite(algorithm: string, layout: S3ObjectLayout): boolean {
    if (layout.partSizes === null || algorithm === 'crc64nvme') return false;
    if (algorithm === 'crc32' || algorithm === 'crc32c') {
      // Either form exists for these; S3 says which one it stores, COMPOSITE is its default.
      return !(layout.storedType === 'FULL_OBJECT' && layout.stored[algorithm] !== undefined);
    }
    return true;
  }

  private get composites(): Plan[] {
    return this.plans.filter((plan) => plan.composite);
  }

  async update(chunk: Buffer): Promise<void> {
    await Promise.all([this.base.update(chunk), this.updateParts(chunk)]);
  }

  private async updateParts(chunk: Buffer): Promise<void> {
    const plans = this.composites;
    if (plans.length === 0) {
      this.position += chunk.length;
      return;
    }
    let at = 0;
    while (at < chunk.length) {
      if (this.partIndex >= this.partEnds.length) {
        throw new SourceError('SOURCE_CHANGED', 'the object is longer than its parts', {
          position: this.position,
        });
      }
      const take = Math.min(this.partEnds[this.partIndex] - this.position, chunk.length - at);
      const slice = chunk.subarray(at, at + take);
      await Promise.all(plans.map((plan) => plan.part!.updateAsync(slice)));
      at += take;
      this.position += take;
      this.closeFinishedParts();
    }
  }

  /** Every part that ends at the current position goes into the outer hashers. */
  private closeFinishedParts(): void {
    while (
      this.partIndex < this.partEnds.length &&
      this.partEnds[this.partIndex] === this.position
    ) {
      for (const plan of this.composites) {
        plan.outer!.update(plan.part!.digest());
        plan.part = createHasher(plan.algorithm);
      }
      this.partIndex += 1;
    }
  }

  serialize(): Map<string, Buffer> {
    const states = this.base.serialize();
    const { layout } = this;
    const saved: SavedState = {
      v: 1,
      etag: layout.etag,
      versionId: layout.versionId,
      size: layout.size,
      parts: layout.partSizes === null ? null : packPartSizes(layout.partSizes),
      stored: layout.stored,
      storedType: layout.storedType,
      position: this.position,
      partIndex: this.partIndex,
      hashers: Object.fromEntries(
        this.composites.map((plan) => [
          plan.algorithm,
          [plan.part!.serialize().toString('base64'), plan.outer!.serialize().toString('base64')],
        ]),
      ),
    };
    states.set(S3_CHECKSUM_STATE, Buffer.from(JSON.stringify(saved), 'utf8'));
    return states;
  }

  digests(): Record<string, DigestValue> {
    const digests = this.base.digests();
    const { layout } = this;
    const parts = layout.partSizes === null ? null : layout.partSizes.length;
    if (
      this.composites.length > 0 &&
      (this.partIndex !== this.partEnds.length || this.position !== layout.size)
    ) {
      throw new SourceError('SOURCE_CHANGED', 'the object ended before its last part', {
        position: this.position,
        size: layout.size,
      });
    }
    for (const plan of this.plans) {
      const digest = digests[plan.algorithm];
      if (!digest) continue;
      const md5 = plan.algorithm === 'md5';
      let value: string;
      if (plan.composite) {
        const raw = plan.outer!.digest();
        value = `${md5 ? raw.toString('hex') : raw.toString('base64')}-${parts}`;
      } else {
        value = md5 ? digest.hex : digest.base64;
      }
      const stored = md5
        ? (unquoteEtag(layout.etag) ?? undefined)
        : layout.stored[plan.algorithm as keyof S3ObjectLayout['stored']];
      let verified: boolean | null = null;
      // An ETag is an MD5 only for unencrypted uploads: a different one proves nothing, so it never fails the job.
      if (stored !== undefined)
        verified = md5 ? (stored === value ? true : null) : sameS3Checksum(value, stored);
      const s3: S3ChecksumValue = {
        value,
        type: plan.composite ? 'COMPOSITE' : 'FULL_OBJECT',
        parts,
        verified,
      };
      if (stored !== undefined) s3.stored = stored;
      digest.s3 = s3;
    }
    return digests;
  }
}
