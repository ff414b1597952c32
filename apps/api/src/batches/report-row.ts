import type { BatchItemRow } from '@hashq/batches/batch-items.repository';
import type { ReportRow } from '@hashq/batches/report/types';

/** An item row as @hashq/batches' report writers take it (digests hex and base64). */
export function toReportRow(item: BatchItemRow): ReportRow {
  const digests: ReportRow['digests'] = {};
  for (const [algorithm, hex] of Object.entries(item.digests ?? {})) {
    digests[algorithm] = { hex, base64: Buffer.from(hex, 'hex').toString('base64') };
  }
  return {
    name: item.name,
    source: item.source,
    size: item.size,
    status: item.status === 'queued' ? 'running' : item.status,
    errorCode: item.errorCode,
    errorMessage: item.errorMessage,
    digests,
    expected: item.expected,
  };
}
