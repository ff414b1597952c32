import { BATCH_ITEM_STATUSES, type BatchItemStatus } from '@hashq/batches/batch-items.repository';
import { BATCH_STATUSES, type BatchStatus } from '@hashq/batches/batches.repository';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';

import { decimalInteger, PageQuery } from '../../common/page.query';

export { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../common/page.query';
export const DEFAULT_ITEMS_PAGE_SIZE = 100;
export const MAX_ITEMS_PAGE_SIZE = 1000;
export const REPORT_FORMATS = ['sha256sum', 'bsd', 'csv', 'jsonl'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

export class ListBatchesQuery extends PageQuery {
  @ApiPropertyOptional({ enum: BATCH_STATUSES })
  @IsOptional()
  @IsIn(BATCH_STATUSES)
  status?: BatchStatus;
}

/** Pages of items are bigger (up to MAX_ITEMS_PAGE_SIZE): its own limit, not PageQuery's. */
export class ListItemsQuery {
  @ApiPropertyOptional({ enum: BATCH_ITEM_STATUSES })
  @IsOptional()
  @IsIn(BATCH_ITEM_STATUSES)
  status?: BatchItemStatus;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: MAX_ITEMS_PAGE_SIZE,
    default: DEFAULT_ITEMS_PAGE_SIZE,
  })
  @IsOptional()
  @Transform(decimalInteger)
  @IsInt()
  @Min(1)
  @Max(MAX_ITEMS_PAGE_SIZE)
  limit?: number;

  @ApiPropertyOptional({ description: 'nextCursor of the previous page' })
  @IsOptional()
  @IsString()
  cursor?: string;
}

export class ReportQuery {
  @ApiPropertyOptional({ enum: REPORT_FORMATS, default: 'sha256sum' })
  @IsOptional()
  @IsIn(REPORT_FORMATS)
  format?: ReportFormat;

  @ApiPropertyOptional({
    description: "One of the batch's algorithms (sha256sum/bsd: default the first)",
  })
  @IsOptional()
  @IsString()
  algorithm?: string;
}
