import type { Writable } from 'node:stream';

import { BatchItemsRepository } from '@hashq/batches/batch-items.repository';
import type { BatchRow } from '@hashq/batches/batches.repository';
import type { ReportOptions, ReportRow } from '@hashq/batches/report/types';
import { writeReport } from '@hashq/batches/report/writers';
import { Injectable } from '@nestjs/common';

import { ApiError } from '../common/api-error';
import type { ReportFormat } from './dto/batch-queries';
import { toReportRow } from './report-row';

/** Rows read per query: the report's memory is one page, whatever the batch's size. */
const REPORT_PAGE = 1000;

export const REPORT_CONTENT_TYPES: Record<ReportFormat, string> = {
  sha256sum: 'text/plain; charset=utf-8',
  bsd: 'text/plain; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  jsonl: 'application/x-ndjson',
};

/**
 * GET /v1/batches/:id/report: the items in listing order, read from PostgreSQL one keyset page at a
 * time, turned into text by @hashq/batches' writers and written as it comes, waiting for the client
 * to drain (memory flat in the batch size).
 */
@Injectable()
export class BatchReport {
  constructor(private readonly items: BatchItemsRepository) {}

  /** The writers' options for this batch and algorithm; a 400 before any byte is sent. */
  optionsFor(batch: BatchRow, algorithm?: string): ReportOptions {
    const chosen = algorithm ?? batch.algorithms[0];
    if (!batch.algorithms.includes(chosen)) {
      throw ApiError.validation(
        `algorithm must be one of the batch's: ${batch.algorithms.join(', ')}`,
        [{ field: 'algorithm', problems: ['not an algorithm of this batch'] }],
      );
    }
    return { algorithm: chosen, algorithms: batch.algorithms };
  }

  async stream(
    batch: BatchRow,
    format: ReportFormat,
    options: ReportOptions,
    out: Writable,
  ): Promise<void> {
    for await (const piece of writeReport(format, this.rows(batch.id), options)) {
      await write(out, piece);
    }
    out.end();
  }

  private async *rows(batchId: string): AsyncGenerator<ReportRow> {
    let after = 0;
    for (;;) {
      const rows = await this.items.page(batchId, { afterSeq: after, limit: REPORT_PAGE });
      for (const row of rows) yield toReportRow(row);
      if (rows.length < REPORT_PAGE) return;
      after = rows[rows.length - 1].seq;
    }
  }
}

/** Writes `text`, waiting for 'drain' when the socket's buffer is full. */
function write(out: Writable, text: string): Promise<void> {
  if (text.length === 0 || out.write(text)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const done = (err?: Error) => {
      out.off('drain', done);
      out.off('close', closed);
      if (err) reject(err);
      else resolve();
    };
    const closed = () => done(new Error('client went away'));
    out.once('drain', done);
    out.once('close', closed);
  });
}
