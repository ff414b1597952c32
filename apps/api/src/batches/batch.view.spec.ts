import type { BatchCounts } from '@hashq/batches/batch-items.repository';
import type { BatchRow } from '@hashq/batches/batches.repository';

import { ApiError } from '../common/api-error';
import { toBatchResponse, toItemResponse } from './batch.view';
import { decodeSeqCursor, encodeSeqCursor } from './batches.service';

const started = new Date('2026-12-03T10:00:00Z');

function batch(overrides: Partial<BatchRow> = {}): BatchRow {
  return {
    id: '6e0f6a47-3b0a-4f57-9d1c-3b7a4e7f0c11',
    tenantId: 'default',
    status: 'running',
    source: { type: 'directory', path: '/d', recursive: true },
    algorithms: ['sha256'],
    options: {},
    fence: 1,
    listCursor: null,
    listedItems: 1000,
    listedBytes: 4_096_000,
    listingDone: true,
    dispatchRound: 0,
    errorCode: null,
    errorMessage: null,
    errorDetails: null,
    createdAt: started,
    updatedAt: started,
    startedAt: started,
    finishedAt: null,
    ...overrides,
  };
}

const counts = (done: number, failed = 0): BatchCounts => ({
  byStatus: {
    pending: 1000 - done - failed,
    queued: 0,
    succeeded: done,
    failed,
    mismatch: 0,
    canceled: 0,
  },
  bytesDone: (done + failed) * 4096,
  errorsByCode: failed ? { SOURCE_NOT_FOUND: failed } : {},
});

describe('batch view', () => {
  it('derives rates and the ETA from the counts and the start', () => {
    const view = toBatchResponse(batch(), counts(400, 100), new Date(started.getTime() + 10_000));
    expect(view.items).toMatchObject({ total: 1000, done: 500, failed: 100, pending: 500 });
    expect(view.rate).toEqual({ objectsPerSecond: 50, bytesPerSecond: 204_800, etaSeconds: 10 });
    expect(view.errors).toEqual({ SOURCE_NOT_FOUND: 100 });
  });

  it('has no total and no ETA while the listing runs, and ETA 0 once ended', () => {
    const listing = toBatchResponse(batch({ listingDone: false }), counts(10), started);
    expect(listing.items.total).toBeNull();
    expect(listing.bytes.total).toBeNull();
    expect(listing.rate.etaSeconds).toBeNull();
    const ended = toBatchResponse(
      batch({ status: 'succeeded', finishedAt: new Date(started.getTime() + 4000) }),
      counts(1000),
    );
    expect(ended.rate).toMatchObject({ objectsPerSecond: 250, etaSeconds: 0 });
  });

  it('shows digests as hex and base64', () => {
    const item = toItemResponse({
      seq: 1,
      grp: 1,
      name: 'a',
      source: { type: 'file', path: '/d/a' },
      size: 1,
      version: null,
      expected: null,
      line: null,
      status: 'succeeded',
      jobId: null,
      digests: { sha256: 'ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb' },
      errorCode: null,
      errorMessage: null,
    });
    expect(item.digests!.sha256.base64).toBe('ypeBEsobvcr6wjGzmiPcTaeG7/gUfE5yuYB3ha/uSLs=');
  });

  it('item cursors round-trip and refuse anything else', () => {
    expect(decodeSeqCursor(encodeSeqCursor(123456))).toBe(123456);
    expect(() => decodeSeqCursor('nope')).toThrow(ApiError);
  });
});
