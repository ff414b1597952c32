import { createHash } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { createHasher, Hasher } from '@hashq/native';
import type { OpenedSource } from '@hashq/sources';

import { fileRangeHashers, type FileRangeHost, fileRangeLoop } from './file-range-run';

const KiB = 1024;
const limits = { maxBytes: 1 << 30, minBytesPerInterval: 0, progressIntervalMs: 1000 };

describe('fileRangeLoop', () => {
  let dir: string;
  let path: string;
  let data: Buffer;
  let fd: number;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'hashq-range-'));
    path = join(dir, 'f.bin');
    data = Buffer.alloc(1000 * KiB + 123);
    for (let i = 0; i < data.length; i++) data[i] = (i * 7 + (i >> 9)) & 0xff;
    writeFileSync(path, data);
    fd = openSync(path, 'r');
  });

  afterAll(() => {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  });

  const opened = (size: number, descriptor = fd): OpenedSource => ({
    stream: (async function* () {})(),
    close: async () => undefined,
    version: {},
    size,
    fd: descriptor,
  });

  /** A host that records what the loop did; `stopAt` answers between() at that position. */
  function host(
    start: number,
    hashers: Hasher[],
    stopAt?: { position: number; answer: 'cancel' | 'hand-back' },
  ) {
    let position = start;
    let bytesRead = start;
    let captured: string[] = [];
    const seen: { position: number; bytesRead: number; states: string[] }[] = [];
    const controller = new AbortController();
    const h: FileRangeHost = {
      rangeBytes: 128 * KiB,
      limits,
      signal: controller.signal,
      position: () => position,
      read: (count) => {
        bytesRead += count;
      },
      hashed: (count) => {
        position += count;
      },
      capture: () => {
        captured = hashers.map((x) => x.serialize().toString('hex'));
      },
      timed: (_stage, work) => work,
      aborted: () => 'cancel',
      between: async () => {
        seen.push({ position, bytesRead, states: captured });
        return stopAt && position >= stopAt.position ? stopAt.answer : undefined;
      },
    };
    return { h, seen, controller, at: () => position, read: () => bytesRead };
  }

  const sha = (name: string, bytes: Buffer) => createHash(name).update(bytes).digest('hex');

  it('hashes the file from the position in ranges, equal to crypto, one range read ahead', async () => {
    const hashers = [createHasher('sha256'), createHasher('sha1')];
    const run = host(5 * KiB, hashers);
    // resuming at 5 KiB: the hashers hold the first 5 KiB already
    hashers.forEach((x) => x.update(data.subarray(0, 5 * KiB)));
    const target = fileRangeHashers(opened(data.length), { list: () => hashers })!;
    expect(await fileRangeLoop(run.h, opened(data.length), target)).toBe('end');
    expect(run.at()).toBe(data.length);
    const ends = [
      ...Array.from({ length: 7 }, (_, i) => 5 * KiB + (i + 1) * 128 * KiB),
      data.length,
    ];
    expect(run.seen.map((s) => s.position)).toEqual(ends);
    // between ranges the next one is being read already, and counts as read
    expect(run.seen.map((s) => s.bytesRead)).toEqual([...ends.slice(1), data.length]);
    expect(run.read()).toBe(data.length);
    expect(hashers[0].digest().toString('hex')).toBe(sha('sha256', data));
    expect(hashers[1].digest().toString('hex')).toBe(sha('sha1', data));
    // a state taken between ranges resumes to the same digest
    const mid = Hasher.restore(Buffer.from(run.seen[2].states[0], 'hex'));
    mid.update(data.subarray(run.seen[2].position));
    expect(mid.digest().toString('hex')).toBe(sha('sha256', data));
  });

  it('a hand-back hashes one more range; a cancel stops at once', async () => {
    const a = [createHasher('sha256')];
    const handBack = host(0, a, { position: 256 * KiB, answer: 'hand-back' });
    const target = { fd, list: a };
    expect(await fileRangeLoop(handBack.h, opened(data.length), target)).toBe('hand-back');
    expect(handBack.at()).toBe(384 * KiB);
    expect(handBack.read()).toBe(384 * KiB); // nothing started after the hand-back's range
    expect(a[0].busy).toBe(false);
    expect(a[0].digest().toString('hex')).toBe(sha('sha256', data.subarray(0, 384 * KiB)));

    const b = [createHasher('sha256')];
    const cancel = host(0, b, { position: 128 * KiB, answer: 'cancel' });
    expect(await fileRangeLoop(cancel.h, opened(data.length), { fd, list: b })).toBe('cancel');
    expect(cancel.at()).toBe(128 * KiB);
  });

  it('an abort while a range is read returns the host answer', async () => {
    const hashers = [createHasher('sha256')];
    const run = host(0, hashers);
    run.controller.abort(new Error('cancel requested'));
    expect(await fileRangeLoop(run.h, opened(data.length), { fd, list: hashers })).toBe('cancel');
  });

  it('a file that shrank ends the loop short of its size (the run then fails SOURCE_CHANGED)', async () => {
    const short = join(dir, 'short.bin');
    writeFileSync(short, data);
    const sfd = openSync(short, 'r');
    try {
      truncateSync(short, 200 * KiB);
      const hashers = [createHasher('sha256')];
      const run = host(0, hashers);
      expect(await fileRangeLoop(run.h, opened(data.length, sfd), { fd: sfd, list: hashers })).toBe(
        'end',
      );
      expect(run.at()).toBe(200 * KiB);
      expect(run.read()).toBe(200 * KiB); // the short range's count corrected
    } finally {
      closeSync(sfd);
    }
  });

  it('a read error is a retryable SOURCE_READ_FAILED with the errno', async () => {
    const d = openSync(dir, 'r'); // a directory: pread fails EISDIR
    try {
      const hashers = [createHasher('sha256')];
      const run = host(0, hashers);
      await expect(
        fileRangeLoop(run.h, opened(10, d), { fd: d, list: hashers }),
      ).rejects.toMatchObject({ code: 'SOURCE_READ_FAILED', details: { errno: 'EISDIR' } });
    } finally {
      closeSync(d);
    }
  });

  it('only a file with a descriptor and plain hashers takes the native path', () => {
    const list = () => [createHasher('sha256')];
    expect(fileRangeHashers(opened(10), { list })).not.toBeNull();
    expect(fileRangeHashers({ ...opened(10), fd: undefined }, { list })).toBeNull();
    expect(fileRangeHashers({ ...opened(10), size: null }, { list })).toBeNull();
    expect(fileRangeHashers(opened(10), { update: async () => undefined })).toBeNull();
  });
});
