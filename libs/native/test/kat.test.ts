/**
 * Every vector of every file in test/vectors, through the Node API: in this
 * process (dispatched path: SHA-NI etc. where the CPU has it) and in a child
 * process forced onto the portable path.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';

import * as lib from '../lib';
import { checkKatFile, HashFn, KAT_DIR, listKatFiles } from './helpers/kat';
import { KatResult, runKats } from './helpers/library';
import { runChild } from './helpers/spawn';

const ALL_ALGORITHMS: lib.AlgorithmName[] = [
  'sha1',
  'sha224',
  'sha256',
  'sha384',
  'sha512',
  'sha3-256',
  'sha3-512',
  'shake128',
  'shake256',
  'ascon-hash256',
  'ascon-xof128',
  'ascon-cxof128',
  'asconhashv12',
  'asconhashav12',
  'asconxofv12',
  'asconxofav12',
  'md5',
  'crc32',
  'crc32c',
  'crc64nvme',
  'xoodyak',
  'esch256',
  'esch384',
  'romulush',
  'photonbeetlehash256',
];

const files = listKatFiles();

function expectAllPass(results: KatResult[]): void {
  const linked = files.filter((f) => lib.findAlgorithm(f.algorithm));
  expect(results.map((r) => r.file)).toEqual(linked.map((f) => f.file));
  for (const r of results) {
    expect({ file: r.file, failures: r.failures }).toEqual({ file: r.file, failures: [] });
    expect(r.checked).toBeGreaterThan(0);
  }
}

describe('known-answer tests', () => {
  test('the vector directory holds every file the README lists', () => {
    expect(files).toHaveLength(33);
  });

  test('every stored file decompresses to the bytes SHA256SUMS lists', () => {
    const sums = fs.readFileSync(path.join(KAT_DIR, 'SHA256SUMS'), 'utf8').trim().split('\n');
    expect(sums).toHaveLength(34);
    for (const line of sums) {
      const [sum, file] = line.split(/ +/);
      const bytes = zlib.gunzipSync(fs.readFileSync(path.join(KAT_DIR, `${file}.gz`)));
      expect({ file, sum: crypto.createHash('sha256').update(bytes).digest('hex') }).toEqual({
        file,
        sum,
      });
    }
  });

  test('every algorithm is linked (HASHQ_REQUIRE_ALL=1 in CI)', () => {
    const missing = ALL_ALGORITHMS.filter((a) => !lib.findAlgorithm(a));
    if (process.env.HASHQ_REQUIRE_ALL === '1') expect(missing).toEqual([]);
    // Without the flag families may still be landing; the ones present must
    // be ones we know.
    for (const a of lib.algorithms()) expect(ALL_ALGORITHMS).toContain(a.name);
  });

  test('the checker reports a wrong digest', () => {
    const wrong: HashFn = (algorithm, msg, outLen, custom) => {
      const out = lib.hash(algorithm, msg, { length: outLen, customization: custom });
      out[0] ^= 1;
      return out;
    };
    const sha = files.find((f) => f.file === 'sha2/SHA256ShortMsg.rsp')!;
    const monte = files.find((f) => f.file === 'sha3/SHAKE128Monte.rsp')!;
    if (lib.findAlgorithm('sha256')) expect(checkKatFile(sha, wrong).failures).toHaveLength(65);
    if (lib.findAlgorithm('shake128'))
      expect(checkKatFile(monte, wrong).failures).toHaveLength(100);
  });

  test('dispatched path (this process)', () => {
    expect(lib.algorithms().length).toBeGreaterThan(0);
    expectAllPass(runKats(files));
  });

  /**
   * Every other path this machine has: hide the CPU's features one at a
   * time, most advanced first (HASHQ_NATIVE_DISABLE), and run the vectors in
   * a child whenever that changes some algorithm's implementation.
   */
  test('every other CPU-specific path (children, HASHQ_NATIVE_DISABLE)', () => {
    type Info = { implementations: Record<string, string> };
    const order = [
      'avx512vl',
      'vpclmul',
      'avx2',
      'sha',
      'sse4.2',
      'pclmul',
      'bmi2',
      'bmi1',
      'sse4.1',
      'ssse3',
      'sha512',
      'sha2',
      'sha1',
      'pmull',
      'crc32',
      'zknh',
      'zbc',
      'zbb',
    ];
    const { active } = lib.cpuFeatures();
    const seen = new Set<string>();
    const key = (impls: Record<string, string>): string[] =>
      Object.entries(impls).map(([a, i]) => `${a}:${i}`);
    for (const k of key(runChild<Info>('info', null, 'dispatched').implementations)) seen.add(k);
    const hidden: string[] = [];
    for (const feature of order.filter((f) => active.includes(f))) {
      hidden.push(feature);
      const info = runChild<Info>('info', null, { disable: hidden });
      const fresh = key(info.implementations).filter((k) => !seen.has(k));
      if (fresh.length === 0) continue;
      const child = runChild<{ implementations: Record<string, string>; results: KatResult[] }>(
        'kat',
        null,
        {
          disable: hidden,
        },
      );
      expectAllPass(child.results);
      for (const k of key(child.implementations)) seen.add(k);
    }
    // the last step hides everything: nothing CPU-specific is left
    if (active.length > 0) {
      const last = runChild<Info>('info', null, {
        disable: order.filter((f) => active.includes(f)),
      });
      for (const impl of Object.values(last.implementations)) expect(impl).toBe('portable');
    }
  });

  test('portable path (child process, HASHQ_NATIVE_IMPL=portable)', () => {
    const child = runChild<{ implementations: Record<string, string>; results: KatResult[] }>(
      'kat',
      null,
      'portable',
    );
    expect(Object.keys(child.implementations)).toEqual(lib.algorithms().map((a) => a.name));
    for (const impl of Object.values(child.implementations)) expect(impl).toBe('portable');
    expectAllPass(child.results);
  });
});
