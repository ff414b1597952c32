import { BENCHMARK_ARCHS, PROVIDERS } from '@hashq/bench';
import { ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsString,
  Max,
  Min,
} from 'class-validator';

import { IsOptionalNotNull } from '../common/is-optional-not-null';

export class CreateBenchmarkDto {
  @ApiPropertyOptional({
    description: 'Algorithms to measure (default: all of the addon)',
    example: ['sha256', 'ascon-hash256'],
  })
  @IsOptionalNotNull()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(64)
  @IsString({ each: true })
  algorithms?: string[];

  @ApiPropertyOptional({ description: 'Who hashes (default: all)', enum: PROVIDERS, isArray: true })
  @IsOptionalNotNull()
  @IsArray()
  @ArrayMinSize(1)
  @IsIn(PROVIDERS as unknown as string[], { each: true })
  implementations?: string[];

  @ApiPropertyOptional({
    description: 'Message lengths in bytes (default: 0..4096 grid)',
    example: [8, 64, 576, 1536, 4096],
  })
  @IsOptionalNotNull()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(64)
  @IsInt({ each: true })
  @Min(0, { each: true })
  @Max(65536, { each: true })
  lengths?: number[];

  @ApiPropertyOptional({
    description: 'CPU architecture of the worker to run on (process.arch names)',
    enum: BENCHMARK_ARCHS,
    example: 'x64',
  })
  @IsOptionalNotNull()
  @IsIn(BENCHMARK_ARCHS as unknown as string[])
  arch?: string;

  @ApiPropertyOptional({ description: 'Quick mode: fewer lengths and measurements (seconds)' })
  @IsOptionalNotNull()
  @IsBoolean()
  quick?: boolean;
}
