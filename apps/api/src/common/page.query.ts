import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/** Query integers are plain decimal digits: "1e2", "0x10", "+5", " 5" stay strings and fail IsInt. */
export const decimalInteger = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && /^[0-9]+$/.test(value) ? Number(value) : value;

/** The cursor paging of the list routes: ?limit (1..MAX_PAGE_SIZE) and ?cursor. */
export class PageQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE })
  @IsOptional()
  @Transform(decimalInteger)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  limit?: number;

  @ApiPropertyOptional({ description: 'nextCursor of the previous page' })
  @IsOptional()
  @IsString()
  cursor?: string;
}
