/** The library under test, seen through the KAT helpers' HashFn shape. */
import * as lib from '../../lib';
import { checkKatFile, HashFn, KatFile, listKatFiles } from './kat';

/** One call: hash(). */
export const oneShot: HashFn = (algorithm, msg, outLen, custom) =>
  lib.hash(algorithm, msg, { length: outLen, customization: custom });

/** A Hasher fed in three pieces, the middle one serialized and restored. */
export const streamed: HashFn = (algorithm, msg, outLen, custom) => {
  const a = Math.floor(msg.length / 3);
  const b = Math.floor((2 * msg.length) / 3);
  const h = lib.createHasher(algorithm, { customization: custom });
  h.update(msg.subarray(0, a));
  const resumed = lib.Hasher.restore(h.serialize(), algorithm);
  resumed.update(msg.subarray(a, b)).update(msg.subarray(b));
  return resumed.digest({ length: outLen });
};

export interface KatResult {
  file: string;
  algorithm: string;
  checked: number;
  failures: string[];
}

/** Runs every vector file whose algorithm the addon has, one-shot and
 * streamed (Monte files one-shot only: they are chains of one-shots). */
export function runKats(files: KatFile[] = listKatFiles()): KatResult[] {
  const results: KatResult[] = [];
  for (const kat of files) {
    if (!lib.findAlgorithm(kat.algorithm)) continue;
    const one = checkKatFile(kat, oneShot);
    const failures = [...one.failures];
    if (!kat.kind.startsWith('monte')) {
      failures.push(...checkKatFile(kat, streamed).failures.map((f) => `streamed ${f}`));
    }
    results.push({
      file: kat.file,
      algorithm: kat.algorithm,
      checked: one.checked,
      failures: failures.slice(0, 10),
    });
  }
  return results;
}
