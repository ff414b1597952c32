import type { BatchSource } from '@hashq/batches/batches.repository';
import { ManifestInvalidError, parseInlineManifest } from '@hashq/batches/listing/manifest';

import { ApiError } from '../common/api-error';

/**
 * Checks every line of an inline manifest or SUM file before anything runs: bad lines are a 400
 * MANIFEST_LINE_INVALID naming the first one (its number and why) and listing the others.
 */
export async function checkInlineList(source: BatchSource, content: string): Promise<void> {
  try {
    if (source.type === 'manifest') {
      await parseInlineManifest(content, (source.format as 'csv' | 'lines' | undefined) ?? 'auto');
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
