import type { DigestValue } from '@hashq/jobs';

import type { JobError } from './job-errors';

/** The job option `expected`: DIGEST_MISMATCH with every algorithm whose digest differs (hex, any case). */
export function expectedDigestError(
  digests: Record<string, DigestValue>,
  expected: Record<string, string> | undefined,
): JobError | undefined {
  if (!expected) return undefined;
  const mismatches: Record<string, { expected: string; actual: string }> = {};
  for (const [algorithm, hex] of Object.entries(expected)) {
    const actual = digests[algorithm]?.hex;
    if (actual !== undefined && actual !== hex.toLowerCase())
      mismatches[algorithm] = { expected: hex.toLowerCase(), actual };
  }
  if (Object.keys(mismatches).length === 0) return undefined;
  return {
    code: 'DIGEST_MISMATCH',
    message: `digest differs from the expected value for ${Object.keys(mismatches).join(', ')}`,
    details: mismatches,
  };
}
