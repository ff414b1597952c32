import type { JobEntity } from '@hashq/database';
import type { DigestValue } from '@hashq/jobs';
import { publicSource } from '@hashq/sources';

import type { DigestResponse, JobResponse, S3ChecksumResponse } from './dto/job.response';

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

/** The stored digests carry the S3 forms (`s3`); the API shows them apart, as `s3Checksum`. */
function splitDigests(stored: Record<string, DigestValue> | null): {
  digests: Record<string, DigestResponse> | null;
  s3Checksum: Record<string, S3ChecksumResponse> | null;
} {
  if (!stored) return { digests: null, s3Checksum: null };
  const digests: Record<string, DigestResponse> = {};
  const s3Checksum: Record<string, S3ChecksumResponse> = {};
  for (const [algorithm, { hex, base64, s3 }] of Object.entries(stored)) {
    digests[algorithm] = { hex, base64 };
    if (s3) s3Checksum[algorithm] = s3;
  }
  return { digests, s3Checksum };
}

/** The public shape of a job: lease, fence and hash states stay internal. */
export function toJobResponse(job: JobEntity): JobResponse {
  const { digests, s3Checksum } = splitDigests(job.digests);
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
    digests,
    ...(job.options.s3Checksum ? { s3Checksum } : {}),
    error: job.errorCode
      ? {
          code: job.errorCode,
          message: job.errorMessage ?? '',
          details: job.errorDetails ?? undefined,
        }
      : null,
    createdAt: job.createdAt.toISOString(),
    updatedAt: job.updatedAt.toISOString(),
    startedAt: iso(job.startedAt),
    checkpointedAt: iso(job.checkpointedAt),
    finishedAt: iso(job.finishedAt),
  };
}
