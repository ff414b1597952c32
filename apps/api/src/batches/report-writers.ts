import type { BatchItemRow } from '@hashq/batches/batch-items.repository';
import type { BatchRow } from '@hashq/batches/batches.repository';

import type { ReportLines } from './batch-report';
import type { ReportFormat } from './dto/batch-queries';

/**
 * The report line writers of each format. Interim: sha256sum and jsonl only, until the streaming
 * writers of @hashq/batches/report (h-listing) land; this file then only adapts item rows to them.
 */
export function reportWriter(
  format: ReportFormat,
  algorithm: string,
  batch: BatchRow,
): ReportLines {
  void batch;
  switch (format) {
    case 'jsonl':
      return {
        header: () => '',
        line: (item) => `${JSON.stringify(jsonItem(item))}\n`,
      };
    default:
      return {
        header: () => '',
        line: (item) => {
          const hex = item.digests?.[algorithm];
          if (!hex) return '';
          const escaped = /[\\\n\r]/.test(item.name);
          const name = escaped
            ? item.name.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r')
            : item.name;
          return `${escaped ? '\\' : ''}${hex}  ${name}\n`;
        },
      };
  }
}

function jsonItem(item: BatchItemRow) {
  return {
    name: item.name,
    size: item.size,
    status: item.status,
    digests: item.digests,
    error: item.errorCode ? { code: item.errorCode, message: item.errorMessage } : null,
  };
}
