import { TENANT_ID_PATTERN } from '@hashq/jobs';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsInt,
  IsISO8601,
  IsString,
  Length,
  Matches,
  Min,
} from 'class-validator';

import { IsOptionalNotNull } from '../common/is-optional-not-null';
import { type Scope, SCOPES } from './principal';

export class CreateKeyDto {
  @ApiProperty({ description: 'What the key is for (shown in lists)', example: 'ci upload' })
  @IsString()
  @Length(1, 100)
  name: string;

  @ApiProperty({ enum: SCOPES, isArray: true, example: ['jobs:read', 'jobs:write'] })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(SCOPES.length)
  @IsIn(SCOPES as unknown as string[], { each: true })
  scopes: Scope[];

  @ApiPropertyOptional({ description: 'ISO 8601 time after which the key is refused' })
  @IsOptionalNotNull()
  @IsISO8601({ strict: true })
  expiresAt?: string;

  @ApiPropertyOptional({
    description: "The key's tenant (default: the caller's; another one: operator only)",
  })
  @IsOptionalNotNull()
  @IsString()
  @Matches(TENANT_ID_PATTERN)
  tenant?: string;
}

export class CreateTenantDto {
  @ApiProperty({ description: 'Lower-case letters, digits, dashes', example: 'acme' })
  @IsString()
  @Matches(TENANT_ID_PATTERN)
  id: string;

  @ApiProperty({ example: 'ACME Corp.' })
  @IsString()
  @Length(1, 200)
  name: string;

  @ApiPropertyOptional({ description: 'Allowed file roots (within HASHQ_FILE_ROOTS)' })
  @IsOptionalNotNull()
  @IsArray()
  @ArrayMaxSize(64)
  @IsString({ each: true })
  fileRoots?: string[];

  @ApiPropertyOptional({ description: 'Allowed remote hosts' })
  @IsOptionalNotNull()
  @IsArray()
  @ArrayMaxSize(256)
  @IsString({ each: true })
  allowedHosts?: string[];

  @ApiPropertyOptional({ description: 'Allowed S3 buckets' })
  @IsOptionalNotNull()
  @IsArray()
  @ArrayMaxSize(256)
  @IsString({ each: true })
  allowedBuckets?: string[];

  @ApiPropertyOptional({ description: 'Jobs of this tenant running at once' })
  @IsOptionalNotNull()
  @IsInt()
  @Min(1)
  maxRunningJobs?: number;

  @ApiPropertyOptional({ description: 'Jobs of this tenant queued at once' })
  @IsOptionalNotNull()
  @IsInt()
  @Min(1)
  maxQueuedJobs?: number;
}
