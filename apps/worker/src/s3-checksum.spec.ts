import { createHash, randomBytes, randomInt } from 'node:crypto';
import * as zlib from 'node:zlib';

import type { OpenedSource, S3ObjectLayout } from '@hashq/sources';

import { StateInvalidError } from './job-errors';
import { JobHashers } from './job-hashers';
import { S3_CHECKSUM_STATE, s3ChecksumError, S3ChecksumHashers } from './s3-checksum';

/** Oracle: node:crypto and zlib.crc32 (Node >= 20.15). */
const zlibCrc32 = (zlib as unknown as { crc32?: (data: Buffer) => number }).crc32;
function digest(algorithm: string, data: Buffer): Buffer {
  if (algorithm !== 'crc32') return createHash(algorithm).update(data).digest();
  if (!zlibCrc32) throw new Error('zlib.crc32 missing');
  const out = Buffer.alloc(4);
  out.writeUInt32BE(zlibCrc32(data) >>> 0);
  return out;
}
function parts(data: Buffer, sizes: number[]): Buffer[] {
  let at = 0;
  return sizes.map((size) => data.subarray(at, (at += size)));
}
function composite(algorithm: string, data: Buffer, sizes: number[], hex = false): string {
  const outer = digest(
    algorithm,
    Buffer.concat(parts(data, sizes).map((part) => digest(algorithm, part))),
  );
  return `${outer.toString(hex ? 'hex' : 'base64')}-${sizes.length}`;
}

const ALGORITHMS = ['sha256', 'sha1', 'md5', 'crc32', 'crc64nvme'];

function layoutOf(
  data: Buffer,
  partSizes: number[] | null,
  extra: Partial<S3ObjectLayout> = {},
): S3ObjectLayout {
  return {
    etag: '"e"',
    versionId: null,
    size: data.length,
    partSizes,
    stored: {},
    storedType: null,
    ...extra,
  };
}
const openedFor = (layout: S3ObjectLayout): OpenedSource =>
  ({
    version: { etag: layout.etag, versionId: null, size: layout.size },
    size: layout.size,
  }) as unknown as OpenedSource;

/** Feeds `data` in random chunks; at `restartAt` serializes, restores into new objects and goes on. */
async function run(data: Buffer, layout: S3ObjectLayout, restartAt: number | null) {
  let base = JobHashers.create(ALGORITHMS, {});
  let hashers = S3ChecksumHashers.create(base, ALGORITHMS, layout);
  let at = 0;
  while (at < data.length) {
    const end = Math.min(data.length, at + randomInt(1, 200_000));
    if (restartAt !== null && at <= restartAt && restartAt < end) {
      await hashers.update(data.subarray(at, restartAt));
      const states = hashers.serialize();
      expect(states.has(S3_CHECKSUM_STATE)).toBe(true);
      base = JobHashers.restore(ALGORITHMS, states);
      hashers = S3ChecksumHashers.restore(
        base,
        ALGORITHMS,
        states.get(S3_CHECKSUM_STATE)!,
        openedFor(layout),
        restartAt,
      );
      at = restartAt;
      restartAt = null;
      continue;
    }
    await hashers.update(data.subarray(at, end));
    at = end;
  }
  return hashers.digests();
}

describe('S3ChecksumHashers (S3 forms against node:crypto / zlib.crc32)', () => {
  it.each([
    ['equal parts', [300_000, 300_000, 300_000]],
    ['uneven parts', [262_144, 1, 500_003, 77]],
    ['one part', [123_457]],
    ['an empty last part', [200_000, 100_000, 0]],
  ])('multipart, %s, random chunks, serialized and restored mid-part', async (_name, sizes) => {
    const data = randomBytes(sizes.reduce((a, b) => a + b, 0));
    const layout = layoutOf(data, sizes);
    for (const restartAt of [null, randomInt(0, data.length), sizes[0]]) {
      const digests = await run(data, layout, restartAt);
      for (const algorithm of ['sha256', 'sha1', 'crc32']) {
        expect(digests[algorithm].s3).toEqual({
          value: composite(algorithm, data, sizes),
          type: 'COMPOSITE',
          parts: sizes.length,
          verified: null,
        });
      }
      expect(digests.md5.s3).toEqual({
        value: composite('md5', data, sizes, true),
        type: 'COMPOSITE',
        parts: sizes.length,
        verified: null,
        stored: 'e',
      });
      expect(digests.crc64nvme.s3).toEqual({
        value: digests.crc64nvme.base64,
        type: 'FULL_OBJECT',
        parts: sizes.length,
        verified: null,
      });
      expect(digests.sha256.hex).toBe(digest('sha256', data).toString('hex'));
    }
  });

  it('single-request object: the full digests; stored values verified or not', async () => {
    const data = randomBytes(99_999);
    const stored = { sha256: digest('sha256', data).toString('base64'), crc32: 'AAAAAA==' };
    const layout = layoutOf(data, null, {
      etag: `"${digest('md5', data).toString('hex')}"`,
      stored,
      storedType: 'FULL_OBJECT',
    });
    const digests = await run(data, layout, randomInt(0, data.length));
    expect(digests.sha256.s3).toEqual({
      value: stored.sha256,
      type: 'FULL_OBJECT',
      parts: null,
      verified: true,
      stored: stored.sha256,
    });
    expect(digests.crc32.s3).toMatchObject({
      value: digest('crc32', data).toString('base64'),
      verified: false,
      stored: 'AAAAAA==',
    });
    expect(digests.md5.s3).toMatchObject({
      value: digest('md5', data).toString('hex'),
      verified: true,
    });
    expect(s3ChecksumError(digests)).toEqual({
      code: 'S3_CHECKSUM_MISMATCH',
      message: expect.stringContaining('crc32'),
      details: {
        crc32: {
          stored: 'AAAAAA==',
          computed: digest('crc32', data).toString('base64'),
          type: 'FULL_OBJECT',
        },
      },
    });
  });

  it('crc32 with a FULL_OBJECT checksum stored on a multipart object takes the full-object form', async () => {
    const data = randomBytes(400_000);
    const sizes = [250_000, 150_000];
    const full = digest('crc32', data).toString('base64');
    const digests = await run(
      data,
      layoutOf(data, sizes, { stored: { crc32: full }, storedType: 'FULL_OBJECT' }),
      null,
    );
    expect(digests.crc32.s3).toEqual({
      value: full,
      type: 'FULL_OBJECT',
      parts: 2,
      verified: true,
      stored: full,
    });
    expect(digests.sha256.s3?.type).toBe('COMPOSITE');
    expect(s3ChecksumError(digests)).toBeUndefined();
  });

  it('a composite stored without or with the -N suffix compares equal; another N does not', async () => {
    const data = randomBytes(300_000);
    const sizes = [100_000, 200_000];
    const value = composite('sha1', data, sizes);
    const bare = value.replace(/-2$/, '');
    for (const [stored, verified] of [
      [value, true],
      [bare, true],
      [`${bare}-3`, false],
    ] as const) {
      const digests = await run(
        data,
        layoutOf(data, sizes, { stored: { sha1: stored }, storedType: 'COMPOSITE' }),
        null,
      );
      expect(digests.sha1.s3?.verified).toBe(verified);
    }
  });

  it('refuses a saved state of another object version or offset', async () => {
    const data = randomBytes(10_000);
    const layout = layoutOf(data, [5_000, 5_000]);
    const base = JobHashers.create(ALGORITHMS, {});
    const hashers = S3ChecksumHashers.create(base, ALGORITHMS, layout);
    await hashers.update(data.subarray(0, 6_000));
    const saved = hashers.serialize().get(S3_CHECKSUM_STATE)!;
    const restore = (opened: OpenedSource, offset: number) => () =>
      S3ChecksumHashers.restore(base, ALGORITHMS, saved, opened, offset);
    expect(restore(openedFor(layout), 6_000)).not.toThrow();
    expect(restore(openedFor({ ...layout, etag: '"other"' }), 6_000)).toThrow(StateInvalidError);
    expect(restore(openedFor(layout), 4_000)).toThrow(StateInvalidError);
    expect(() =>
      S3ChecksumHashers.restore(base, ALGORITHMS, Buffer.from('{'), openedFor(layout), 6_000),
    ).toThrow(StateInvalidError);
  });
});
