import { JOB_STATUSES, type JobOptions, type JobStatus } from '@hashq/jobs';
import { ApiExtraModels, ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class ProgressResponse {
  @ApiProperty({ description: 'Bytes hashed so far (as of the last checkpoint while running)' })
  bytesDone: number;

  @ApiProperty({ nullable: true, type: Number, description: 'Size of the source at submission' })
  totalBytes: number | null;

  @ApiProperty({ nullable: true, type: Number, description: '0 to 100' })
  percent: number | null;
}

export class DigestResponse {
  @ApiProperty()
  hex: string;

  @ApiProperty()
  base64: string;
}

export class S3ChecksumResponse {
  @ApiProperty({
    example: 'Xl3ilNbXjgqy2g5tqtVd4a4VwNTEpHiZyR/HM8f/Vt8=-3',
    description: 'base64 (md5: hex); composite values end in -<parts>',
  })
  value: string;

  @ApiProperty({ enum: ['FULL_OBJECT', 'COMPOSITE'] })
  type: 'FULL_OBJECT' | 'COMPOSITE';

  @ApiProperty({
    nullable: true,
    type: Number,
    description: 'Parts of a multipart object; null for a single-request upload',
  })
  parts: number | null;

  @ApiProperty({
    nullable: true,
    type: Boolean,
    description:
      'Compared with the checksum S3 stores (md5: the ETag); null: nothing to compare with',
  })
  verified: boolean | null;

  @ApiPropertyOptional({ description: 'The value S3 stores (md5: the ETag), when it has one' })
  stored?: string;
}

export class JobErrorResponse {
  @ApiProperty({ example: 'DIGEST_MISMATCH' })
  code: string;

  @ApiProperty()
  message: string;

  @ApiPropertyOptional({ description: 'e.g. expected and actual digests' })
  details?: unknown;
}

@ApiExtraModels(DigestResponse, S3ChecksumResponse)
export class JobResponse {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ enum: JOB_STATUSES })
  status: JobStatus;

  @ApiProperty({ example: { type: 'file', path: '/srv/hashq/data/big.iso' } })
  source: Record<string, unknown>;

  @ApiProperty({ example: ['sha256'] })
  algorithms: string[];

  @ApiProperty({
    example: { outputLength: 64 },
    description: 'outputLength, customization, expected, priority, s3Checksum',
  })
  options: JobOptions;

  @ApiProperty()
  progress: ProgressResponse;

  @ApiProperty({
    nullable: true,
    type: Number,
    description: 'bytesDone per second of running time',
  })
  throughputBytesPerSecond: number | null;

  @ApiProperty({
    description: 'All bytes read across attempts: re-reading after a crash shows here',
  })
  bytesRead: number;

  @ApiProperty({ description: 'Times a worker took the job' })
  attempts: number;

  @ApiProperty({ description: 'Times a worker continued from a checkpoint' })
  resumes: number;

  @ApiProperty()
  cancelRequested: boolean;

  @ApiProperty({
    nullable: true,
    type: 'object',
    additionalProperties: { $ref: '#/components/schemas/DigestResponse' },
  })
  digests: Record<string, DigestResponse> | null;

  @ApiPropertyOptional({
    nullable: true,
    type: 'object',
    additionalProperties: { $ref: '#/components/schemas/S3ChecksumResponse' },
    description:
      "Only for jobs with the option s3Checksum: by algorithm, the value in S3's form (null until the job has digests)",
  })
  s3Checksum?: Record<string, S3ChecksumResponse> | null;

  @ApiProperty({ nullable: true, type: JobErrorResponse })
  error: JobErrorResponse | null;

  @ApiProperty()
  createdAt: string;

  @ApiProperty()
  updatedAt: string;

  @ApiProperty({ nullable: true, type: String })
  startedAt: string | null;

  @ApiProperty({ nullable: true, type: String })
  checkpointedAt: string | null;

  @ApiProperty({ nullable: true, type: String })
  finishedAt: string | null;
}

export class JobListResponse {
  @ApiProperty({ type: [JobResponse] })
  items: JobResponse[];

  @ApiProperty({
    nullable: true,
    type: String,
    description: 'Pass as ?cursor= for the next page; null on the last one',
  })
  nextCursor: string | null;
}
