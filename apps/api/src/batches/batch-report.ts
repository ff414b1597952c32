import type { Writable } from 'node:stream';

import { type BatchItemRow, BatchItemsRepository } from '@hashq/batches/batch-items.repository';
import type { BatchRow } from '@hashq/batches/batches.repository';
import { Injectable } from '@nestjs/common';

import { ApiError } from '../common/api-error';
import type { ReportFormat } from './dto/batch-queries';
import { reportWriter } from './report-writers';

/** Rows read per query: the report's memory is one page, whatever the batch's size. */
const REPORT_PAGE = 1000;

export const REPORT_CONTENT_TYPES: Record<ReportFormat, string> = {
  sha256sum: 'text/plain; charset=utf-8',
  bsd: 'text/plain; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  jsonl: 'application/x-ndjson',
};

/** One report line per item (or none), plus an optional header: see ./report-writers. */
export interface ReportLines {
  header(): string;
  line(item: BatchItemRow): string;
}

/**
 * GET /v1/batches/:id/report: the items in listing order, read from PostgreSQL one keyset page at a
 * time and written as they come, waiting for the client to drain (memory flat in the batch size).
 */
@Injectable()
export class BatchReport {
  constructor(private readonly items: BatchItemsRepository) {}

  /** The writer for this batch, format and algorithm; a 400 before any byte is sent. */
  writerFor(batch: BatchRow, format: ReportFormat, algorithm?: string): ReportLines {
    const chosen = algorithm ?? batch.algorithms[0];
    if (!batch.algorithms.includes(chosen)) {
      throw ApiError.validation(
        `algorithm must be one of the batch's: ${batch.algorithms.join(', ')}`,
        [{ field: 'algorithm', problems: ['not an algorithm of this batch'] }],
      );
    }
    return reportWriter(format, chosen, batch);
  }

  async stream(batch: BatchRow, writer: ReportLines, out: Writable): Promise<void> {
    await write(out, writer.header());
    let after = 0;
    for (;;) {
      const rows = await this.items.page(batch.id, { afterSeq: after, limit: REPORT_PAGE });
      if (rows.length === 0) break;
      await write(out, rows.map((row) => writer.line(row)).join(''));
      after = rows[rows.length - 1].seq;
      if (rows.length < REPORT_PAGE) break;
    }
    out.end();
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
