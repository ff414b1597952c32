import { findAlgorithm } from '@hashq/native';

/**
 * The BSD-style tag of each algorithm as coreutils writes it (`sha256sum --tag`, `cksum -a`), for
 * the algorithms hashq has; any other hashq algorithm is tagged with its name in capitals.
 */
const COREUTILS_TAGS: Readonly<Record<string, string>> = {
  md5: 'MD5',
  sha1: 'SHA1',
  sha224: 'SHA224',
  sha256: 'SHA256',
  sha384: 'SHA384',
  sha512: 'SHA512',
  'sha3-256': 'SHA3-256',
  'sha3-512': 'SHA3-512',
};

const BY_TAG = new Map(Object.entries(COREUTILS_TAGS).map(([name, tag]) => [tag, name]));

/** The tag written for `algorithm` (a hashq name) in BSD lines. */
export function algorithmTag(algorithm: string): string {
  return COREUTILS_TAGS[algorithm] ?? algorithm.toUpperCase();
}

/** What a SUM file must know of an algorithm: its name and digest size. */
export interface DigestSpec {
  name: string;
  digestLength: number;
  xof: boolean;
}

/** The hashq algorithm a BSD tag names (SHA256, SHA3-256, ASCON-HASH256...), or undefined. */
export function algorithmOfTag(tag: string): DigestSpec | undefined {
  const name = BY_TAG.get(tag) ?? tag.toLowerCase();
  return digestSpec(name);
}

/** The digest size of a hashq algorithm, from the addon's table; undefined when unknown. */
export function digestSpec(name: string): DigestSpec | undefined {
  const info = findAlgorithm(name);
  return info ? { name: info.name, digestLength: info.digestLength, xof: info.xof } : undefined;
}
