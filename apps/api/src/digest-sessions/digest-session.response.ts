import { ApiProperty } from '@nestjs/swagger';

import { DigestResponse, JobErrorResponse } from '../jobs/dto/job.response';
import type { DigestSessionRow } from './digest-sessions.repository';

/** The JSON of GET /v1/digest-sessions/:id; hash states stay internal. */
export class DigestSessionResponse {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({
    enum: ['uploading', 'succeeded', 'failed'],
    description:
      'failed: an expected digest differs (DIGEST_MISMATCH), or the stored state did not open (STATE_INVALID)',
  })
  status: string;

  @ApiProperty({ example: ['sha256', 'sha512'] })
  algorithms: string[];

  @ApiProperty({
    example: { outputLength: 64 },
    description: 'outputLength, customization, expected',
  })
  options: Record<string, unknown>;

  @ApiProperty({ description: 'Bytes committed (tus Upload-Offset)' })
  offset: number;

  @ApiProperty({
    nullable: true,
    type: Number,
    description: 'tus Upload-Length; null while deferred',
  })
  length: number | null;

  @ApiProperty({
    nullable: true,
    type: 'object',
    additionalProperties: { $ref: '#/components/schemas/DigestResponse' },
  })
  digests: Record<string, DigestResponse> | null;

  @ApiProperty({ nullable: true, type: JobErrorResponse })
  error: JobErrorResponse | null;

  @ApiProperty()
  createdAt: string;

  @ApiProperty()
  updatedAt: string;

  @ApiProperty({ description: 'The session expires (410) if no PATCH commits before then' })
  expiresAt: string;

  @ApiProperty({ nullable: true, type: String })
  finishedAt: string | null;
}

export function toSessionResponse(session: DigestSessionRow): DigestSessionResponse {
  return {
    id: session.id,
    status: session.status,
    algorithms: session.algorithms,
    options: { ...session.options },
    offset: session.uploadOffset,
    length: session.uploadLength,
    digests: session.digests,
    error: session.error ? { ...session.error, details: session.error.details ?? undefined } : null,
    createdAt: session.createdAt.toISOString(),
    updatedAt: session.updatedAt.toISOString(),
    expiresAt: session.expiresAt.toISOString(),
    finishedAt: session.finishedAt ? session.finishedAt.toISOString() : null,
  };
}
