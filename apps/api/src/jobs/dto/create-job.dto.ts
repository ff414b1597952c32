import { MAX_PRIORITY, MIN_PRIORITY } from '@hashq/jobs';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsInt,
  IsObject,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
} from 'class-validator';

import { IsOptionalNotNull } from '../../common/is-optional-not-null';

export const MAX_ALGORITHMS = 8;
export const MAX_OUTPUT_LENGTH = 8192;
/** 256 bytes, the native library's limit, as hex. */
export const MAX_CUSTOMIZATION_HEX = 512;

export class FileSourceDto {
  @ApiProperty({ enum: ['file'] })
  type: 'file';

  @ApiProperty({
    description: 'Absolute path inside one of HASHQ_FILE_ROOTS',
    example: '/srv/hashq/data/big.iso',
  })
  path: string;
}

/** Body of POST /v1/jobs. `source` has two forms and is checked by JobSourceResolver. */
export class CreateJobDto {
  @ApiProperty({
    description: 'A local file: {"type":"file","path":"/abs/path"} or "file:///abs/path"',
    oneOf: [
      { $ref: '#/components/schemas/FileSourceDto' },
      { type: 'string', example: 'file:///srv/hashq/data/big.iso' },
    ],
  })
  @IsDefined()
  source: unknown;

  @ApiProperty({
    description: `1 to ${MAX_ALGORITHMS} names from GET /v1/algorithms, hashed in one read pass`,
    example: ['sha256', 'sha1'],
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_ALGORITHMS)
  @IsString({ each: true })
  algorithms: string[];

  @ApiPropertyOptional({
    description: 'Output length in bytes; only for XOFs (e.g. shake256)',
    minimum: 1,
    maximum: MAX_OUTPUT_LENGTH,
  })
  @IsOptionalNotNull()
  @IsInt()
  @Min(1)
  @Max(MAX_OUTPUT_LENGTH)
  outputLength?: number;

  @ApiPropertyOptional({
    description:
      'Customization string as hex; only for customizable algorithms (e.g. ascon-cxof128)',
    example: '6869',
  })
  @IsOptionalNotNull()
  @IsString()
  @MaxLength(MAX_CUSTOMIZATION_HEX)
  @Matches(/^(?:[0-9a-fA-F]{2})*$/, {
    message: 'customization must be hex (an even number of hex digits)',
  })
  customization?: string;

  @ApiPropertyOptional({
    description:
      'Expected digests (hex) by algorithm; a mismatch fails the job with DIGEST_MISMATCH',
    example: { sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' },
    type: 'object',
    additionalProperties: { type: 'string' },
  })
  @IsOptionalNotNull()
  @IsObject()
  expected?: Record<string, unknown>;

  @ApiPropertyOptional({
    description: 'BullMQ priority: 1 runs first; absent = after every prioritized job',
    minimum: MIN_PRIORITY,
    maximum: MAX_PRIORITY,
  })
  @IsOptionalNotNull()
  @IsInt()
  @Min(MIN_PRIORITY)
  @Max(MAX_PRIORITY)
  priority?: number;

  @ApiPropertyOptional({
    description:
      "S3 sources only: also report crc32, crc32c, crc64nvme, sha1, sha256 and md5 (ETag) in S3's own form for the object " +
      '(multipart: composite over the parts) and compare with the checksum S3 stores; a mismatch fails the job with S3_CHECKSUM_MISMATCH',
    example: true,
  })
  @IsOptionalNotNull()
  @IsBoolean()
  s3Checksum?: boolean;
}
