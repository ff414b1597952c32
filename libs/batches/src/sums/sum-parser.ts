import { join } from 'node:path';

import type { SourceRef } from '@hashq/jobs';

import { LineLister, type OpenAt } from '../listing/line-lister';
import {
  type ByteSource,
  type LinePosition,
  lineText,
  readLines,
  withoutBom,
} from '../listing/lines';
import { collectInline, invalidLine } from '../listing/manifest';
import type { ListedItem } from '../listing/types';
import { algorithmOfTag, type DigestSpec, digestSpec } from './algorithm-tags';
import { unescapeName } from './coreutils-names';

/** What the names of a SUM file are relative to. */
export type SumsBase =
  | { type: 'directory'; /** its real path (resolveDirectory) */ path: string }
  | { type: 's3'; bucket: string; prefix: string }
  | { type: 'http'; /** names are appended, each segment percent-encoded */ prefix: string };

export interface SumsOptions {
  base: SumsBase;
  /** The batch's algorithms: an untagged line's algorithm is the one its digest length fits. */
  algorithms: readonly string[];
  /** The digest length in bytes of an XOF (the batch's outputLength). */
  outputLength?: number;
}

/** One checksum line, parsed. */
export interface SumLine {
  name: string;
  algorithm: string;
  hex: string;
}

/**
 * Reads SUM files as GNU coreutils' `sha256sum -c` does (coreutils 9): `<hex>  <name>`,
 * `<hex> *<name>` (binary marker), BSD tags `SHA256 (name) = <hex>` (any algorithm hashq has, see
 * algorithm-tags), the `\`-escaped names of a line starting with a backslash, leading blanks, a
 * CR before the newline, `#` comments, and BSD's reversed `<hex> <name>` once a file starts so.
 * Blank lines are skipped. Digest lengths are checked against the algorithm.
 */
export class SumLineParser {
  /** coreutils' bsd_reversed: undecided, then fixed by the first untagged line. */
  private reversed: boolean | null = null;
  private readonly untagged: Map<number, DigestSpec[]>;

  constructor(private readonly options: Pick<SumsOptions, 'algorithms' | 'outputLength'>) {
    this.untagged = new Map();
    for (const name of options.algorithms) {
      const spec = digestSpec(name);
      if (!spec) continue;
      const hexLength = this.digestLength(spec) * 2;
      this.untagged.set(hexLength, [...(this.untagged.get(hexLength) ?? []), spec]);
    }
  }

  /** The line's name, algorithm and digest, or why it is not a checksum line. */
  parse(line: string): SumLine | string {
    let i = 0;
    while (line[i] === ' ' || line[i] === '\t') i++;
    const escaped = line[i] === '\\';
    const rest = line.slice(escaped ? i + 1 : i);
    const tag = /^([A-Za-z0-9][A-Za-z0-9-]*) ?\(/.exec(rest);
    const tagged = tag ? algorithmOfTag(tag[1]) : undefined;
    if (tag && tagged) return this.tagged(rest.slice(tag[0].length), tagged, escaped);
    return this.plain(rest, escaped);
  }

  /** `(name) = digest`, after the tag and its parenthesis; the name ends at the last `)`. */
  private tagged(rest: string, spec: DigestSpec, escaped: boolean): SumLine | string {
    const close = rest.lastIndexOf(')');
    if (close === -1) return 'no ")" after the name';
    const digest = /^[ \t]*=[ \t]*(\S+)$/.exec(rest.slice(close + 1));
    if (!digest) return 'expected "= <digest>" after the name';
    const hex = this.hexOf(digest[1], spec);
    if (!hex.startsWith('ok:')) return hex;
    return this.named(rest.slice(0, close), escaped, spec.name, hex.slice(3));
  }

  private plain(rest: string, escaped: boolean): SumLine | string {
    const digest = /^([0-9A-Fa-f]+)[ \t]/.exec(rest);
    if (!digest) return 'not a checksum line';
    const after = rest.slice(digest[0].length);
    let name: string;
    if (after.length === 1 || (after[0] !== ' ' && after[0] !== '*')) {
      if (this.reversed === false) return '"<digest> <name>" after "<digest>  <name>" lines';
      this.reversed = true;
      name = after;
    } else if (this.reversed === true) {
      name = after; // as coreutils: in a reversed file the blank or star belongs to the name
    } else {
      this.reversed = false;
      name = after.slice(1);
    }
    const specs = this.untagged.get(digest[1].length) ?? [];
    if (specs.length !== 1) {
      const which = this.options.algorithms.join(', ');
      return specs.length === 0
        ? `a digest of ${digest[1].length} hex digits fits none of the batch's algorithms (${which})`
        : `a digest of ${digest[1].length} hex digits fits several algorithms (${specs
            .map((spec) => spec.name)
            .join(', ')}): use BSD tags`;
    }
    return this.named(name, escaped, specs[0].name, digest[1].toLowerCase());
  }

  private named(raw: string, escaped: boolean, algorithm: string, hex: string): SumLine | string {
    const name = escaped ? unescapeName(raw) : raw;
    if (name === null) return 'bad escape in the name (only \\\\, \\n and \\r)';
    if (name === '') return 'empty name';
    return { name, algorithm, hex };
  }

  /** `ok:<lowercase hex>` for a hex (or coreutils 9.2's base64) digest of the right size. */
  private hexOf(digest: string, spec: DigestSpec): string {
    const bytes = this.digestLength(spec);
    if (/^[0-9A-Fa-f]+$/.test(digest)) {
      if (digest.length === bytes * 2) return `ok:${digest.toLowerCase()}`;
    } else if (/^[A-Za-z0-9+/]+={0,2}$/.test(digest) && digest.length % 4 === 0) {
      const decoded = Buffer.from(digest, 'base64');
      if (decoded.length === bytes) return `ok:${decoded.toString('hex')}`;
    } else {
      return 'the digest is neither hex nor base64';
    }
    return `a ${spec.name} digest has ${bytes * 2} hex digits`;
  }

  private digestLength(spec: DigestSpec): number {
    return spec.xof ? (this.options.outputLength ?? spec.digestLength) : spec.digestLength;
  }
}

/**
 * The items of a SUM file, in file order: one per checksum line, its name under the base, the
 * expected digest, the line number and (`next`) where the line after it starts. A bad line is an
 * item failing MANIFEST_LINE_INVALID (source NO_SOURCE). A name listed on several lines (one per
 * algorithm) gives several items.
 */
export async function* parseSums(
  stream: ByteSource,
  options: SumsOptions,
  from: LinePosition = { line: 1, offset: 0 },
): AsyncGenerator<ListedItem & { line: number; next: LinePosition }> {
  const parser = new SumLineParser(options);
  for await (const record of readLines(stream, from)) {
    const line = record.start.line;
    const text = lineText(withoutBom(record));
    const content = text?.endsWith('\r') ? text.slice(0, -1) : text;
    if (content === '' || content?.startsWith('#')) continue;
    const parsed =
      content === null || content === undefined
        ? 'line is not UTF-8'
        : record.tooLong
          ? 'line is too long'
          : parser.parse(content);
    const item =
      typeof parsed === 'string'
        ? invalidLine(line, parsed, content ?? '')
        : itemOf(parsed, options.base, line, content!);
    yield { ...item, next: record.next };
  }
}

/** A SUM file given inline: its items, or ManifestInvalidError with every bad line. */
export function parseInlineSums(
  content: string | Buffer,
  options: SumsOptions,
  maxErrors = 100,
): Promise<ListedItem[]> {
  return collectInline(parseSums([content], options), maxErrors);
}

/** A SUM file read by reference, resumable from a line cursor (see LineLister). */
export class SumsLister extends LineLister {
  constructor(open: OpenAt, options: SumsOptions) {
    super(open, (stream, from) => parseSums(stream, options, from));
  }
}

function itemOf(
  parsed: SumLine,
  base: SumsBase,
  line: number,
  content: string,
): ListedItem & { line: number } {
  const source = sourceOf(parsed.name, base);
  if (typeof source === 'string') return invalidLine(line, source, content);
  return { name: parsed.name, source, expected: { [parsed.algorithm]: parsed.hex }, line };
}

/** Where `name` lies under the base, or why it cannot. */
export function sourceOf(name: string, base: SumsBase): SourceRef | string {
  switch (base.type) {
    case 'directory':
      if (name.startsWith('/')) return 'an absolute name: names are relative to the base directory';
      if (name.includes('\0')) return 'a NUL in the name';
      if (name.split('/').includes('..')) return 'a ".." in the name';
      return { type: 'file', path: join(base.path, name) };
    case 's3':
      if (Buffer.byteLength(base.prefix + name) > 1024) return 'the key is longer than 1024 bytes';
      return { type: 's3', bucket: base.bucket, key: base.prefix + name };
    case 'http':
      return { type: 'http', url: base.prefix + name.split('/').map(encodeURIComponent).join('/') };
  }
}
