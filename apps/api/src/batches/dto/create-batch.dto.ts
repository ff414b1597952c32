import { MAX_PRIORITY, MIN_PRIORITY } from '@hashq/jobs';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsDefined,
  IsIn,
  IsInt,
  IsString,
  Max,
  Min,
} from 'class-validator';

import { IsOptionalNotNull } from '../../common/is-optional-not-null';
import { MAX_ALGORITHMS, MAX_OUTPUT_LENGTH } from '../../jobs/dto/create-job.dto';

/** Body of POST /v1/batches. `source` has four forms, checked by BatchSourceResolver. */
export class CreateBatchDto {
  @ApiProperty({
    description:
      'One of {"type":"directory","path","recursive"?,"include"?}, {"type":"s3","bucket","prefix"?,"startAfter"?}, ' +
      '{"type":"manifest","content"|"ref","format"?}, {"type":"sums","base","content"|"ref"} (docs/batches.md)',
    example: { type: 'directory', path: '/srv/hashq/data/photos', recursive: true },
  })
  @IsDefined()
  source: unknown;

  @ApiProperty({
    description: `1 to ${MAX_ALGORITHMS} names from GET /v1/algorithms`,
    example: ['sha256'],
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_ALGORITHMS)
  @IsString({ each: true })
  algorithms: string[];

  @ApiPropertyOptional({ description: 'Output length in bytes; only for XOFs', minimum: 1 })
  @IsOptionalNotNull()
  @IsInt()
  @Min(1)
  @Max(MAX_OUTPUT_LENGTH)
  outputLength?: number;

  @ApiPropertyOptional({ description: 'BullMQ priority of the batch work: 1 runs first' })
  @IsOptionalNotNull()
  @IsInt()
  @Min(MIN_PRIORITY)
  @Max(MAX_PRIORITY)
  priority?: number;

  @ApiPropertyOptional({
    enum: ['s3'],
    description: 's3 sources: compare each object with the checksum S3 stores',
  })
  @IsOptionalNotNull()
  @IsIn(['s3'])
  verify?: 's3';
}
