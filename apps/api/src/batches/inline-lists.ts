import type { BatchSource } from '@hashq/batches/batches.repository';
import { ManifestInvalidError, parseInlineManifest } from '@hashq/batches/listing/manifest';
import type { ListedItem } from '@hashq/batches/listing/types';
import { parseInlineSums } from '@hashq/batches/sums/sum-parser';
import { remoteSumsBase } from '@hashq/batches/sums-base';

import { ApiError } from '../common/api-error';

/** The batch's hashing, which a SUM file's untagged digests are matched against. */
export interface InlineHashing {
  algorithms: readonly string[];
  outputLength?: number;
}

/**
 * Checks every line of an inline manifest or SUM file before anything runs: bad lines are a 400
 * MANIFEST_LINE_INVALID naming the first one (its number and why) and listing the others.
 */
export async function checkInlineList(
  source: BatchSource,
  content: string,
  hashing: InlineHashing,
): Promise<void> {
  await inlineListItems(source, content, hashing);
}

/** The items of an inline manifest or SUM file (a 400 MANIFEST_LINE_INVALID for bad lines). */
export async function inlineListItems(
  source: BatchSource,
  content: string,
  hashing: InlineHashing,
): Promise<ListedItem[]> {
  try {
    if (source.type === 'manifest') {
      return await parseInlineManifest(
        content,
        (source.format as 'csv' | 'lines' | undefined) ?? 'auto',
      );
    } else {
      const base = source.base as string;
      return await parseInlineSums(content, {
        base: base.startsWith('/') ? { type: 'directory', path: base } : remoteSumsBase(base),
        algorithms: hashing.algorithms,
        outputLength: hashing.outputLength,
      });
    }
  } catch (err) {
    if (err instanceof ManifestInvalidError) {
      throw ApiError.badRequest('MANIFEST_LINE_INVALID', err.message, {
        line: err.errors[0].line,
        errors: err.errors,
      });
    }
    throw err;
  }
}
