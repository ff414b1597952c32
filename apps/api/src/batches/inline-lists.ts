import type { BatchSource } from '@hashq/batches/batches.repository';

/**
 * Checks every line of an inline manifest or SUM file before anything runs: the first bad line is
 * a 400 MANIFEST_LINE_INVALID with its number and reason. The parsers are @hashq/batches'.
 */
export function checkInlineList(_source: BatchSource, _content: string): void {
  // Wired to the manifest and SUM parsers of @hashq/batches when they land (h-listing).
}
