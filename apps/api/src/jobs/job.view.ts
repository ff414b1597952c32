import type { JobEntity } from '@hashq/database';
import { publicSource } from '@hashq/sources';

import type { JobResponse } from './dto/job.response';

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

function percent(job: JobEntity): number | null {
  if (job.totalBytes === null) return null;
  if (job.totalBytes === 0) return job.status === 'succeeded' ? 100 : 0;
  return Math.min(100, Math.round((job.bytesDone / job.totalBytes) * 10000) / 100);
}

/** Bytes hashed per second between the first lease and the end (or now, while running). */
function throughput(job: JobEntity): number | null {
  if (!job.startedAt || job.bytesDone === 0) return null;
  const end = job.finishedAt ?? job.checkpointedAt ?? new Date();
  const seconds = (end.getTime() - job.startedAt.getTime()) / 1000;
  return seconds > 0 ? Math.round(job.bytesDone / seconds) : null;
}

/** The public shape of a job: lease, fence and hash states stay internal. */
export function toJobResponse(job: JobEntity): JobResponse {
  return {
    id: job.id,
    status: job.status,
    source: publicSource(job.source),
    algorithms: job.algorithms,
    options: job.options,
    progress: { bytesDone: job.bytesDone, totalBytes: job.totalBytes, percent: percent(job) },
    throughputBytesPerSecond: throughput(job),
    bytesRead: job.bytesRead,
    attempts: job.attempts,
    resumes: job.resumes,
    cancelRequested: job.cancelRequested,
    digests: job.digests,
    error: job.errorCode
      ? { code: job.errorCode, message: job.errorMessage ?? '', details: job.errorDetails ?? undefined }
      : null,
    createdAt: job.createdAt.toISOString(),
    updatedAt: job.updatedAt.toISOString(),
    startedAt: iso(job.startedAt),
    checkpointedAt: iso(job.checkpointedAt),
    finishedAt: iso(job.finishedAt),
  };
}
