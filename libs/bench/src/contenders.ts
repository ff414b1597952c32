/**
 * The ways to hash a message that a run measures: our addon, and what a
 * user would pick instead (Node's crypto, hash-wasm) where it has the
 * algorithm and yields the same digest.
 */
import * as crypto from 'node:crypto';

import * as native from '@hashq/native';

import type { Provider } from './types';

export interface Contender {
  provider: Provider;
  implementation: string;
  /** one-shot hash of a message */
  hash: (message: Uint8Array) => Uint8Array;
}

interface WasmHasher {
  init(): unknown;
  update(data: Uint8Array): unknown;
  digest(format: 'binary'): Uint8Array;
}

/** hash-wasm factories by our algorithm names. */
const WASM_FACTORIES: Record<string, (hw: HashWasm) => Promise<WasmHasher>> = {
  sha1: (hw) => hw.createSHA1(),
  sha224: (hw) => hw.createSHA224(),
  sha256: (hw) => hw.createSHA256(),
  sha384: (hw) => hw.createSHA384(),
  sha512: (hw) => hw.createSHA512(),
  'sha3-256': (hw) => hw.createSHA3(256),
  'sha3-512': (hw) => hw.createSHA3(512),
  md5: (hw) => hw.createMD5(),
  crc32: (hw) => hw.createCRC32(),
  crc32c: (hw) => hw.createCRC32(0x82f63b78), // Castagnoli, reflected
  crc64nvme: (hw) => hw.createCRC64('9a6c9329ac4bc9b5'), // NVMe polynomial, reflected
};

type HashWasm = Record<string, (...a: unknown[]) => Promise<WasmHasher>>;

/** hash-wasm is optional (a devDependency): absent, its rows are left out. */
async function loadHashWasm(): Promise<HashWasm | undefined> {
  try {
    return (await import('hash-wasm')) as unknown as HashWasm;
  } catch {
    return undefined;
  }
}

const nodeHashes = new Set(crypto.getHashes());

export async function contendersFor(
  algorithm: string,
  providers: readonly Provider[],
): Promise<Contender[]> {
  const info = native.findAlgorithm(algorithm);
  if (!info) throw new Error(`unknown algorithm: ${algorithm}`);
  const list: Contender[] = [];
  const want = new Set(providers);
  if (want.has('hashq')) {
    list.push({
      provider: 'hashq',
      implementation: info.implementation,
      hash: (m) => native.hash(algorithm, m),
    });
  }
  if (nodeHashes.has(algorithm)) {
    const options = info.xof ? { outputLength: info.digestLength } : undefined;
    if (want.has('node-createHash')) {
      list.push({
        provider: 'node-createHash',
        implementation: 'openssl',
        hash: (m) => crypto.createHash(algorithm, options).update(m).digest(),
      });
    }
    // crypto.hash() (Node ≥ 20.12) has no output length for XOFs
    if (want.has('node-hash') && typeof crypto.hash === 'function' && !info.xof) {
      list.push({
        provider: 'node-hash',
        implementation: 'openssl',
        hash: (m) => crypto.hash(algorithm, m, 'buffer'),
      });
    }
  }
  const hw = want.has('hash-wasm') ? await loadHashWasm() : undefined;
  if (hw && WASM_FACTORIES[algorithm]) {
    const h = await WASM_FACTORIES[algorithm](hw);
    list.push({
      provider: 'hash-wasm',
      implementation: 'wasm',
      hash: (m) => {
        h.init();
        h.update(m);
        return h.digest('binary');
      },
    });
  }
  const probe = crypto.randomBytes(1000);
  const expected = native.hash(algorithm, probe);
  return list.filter((c) => Buffer.from(c.hash(probe)).equals(expected));
}
