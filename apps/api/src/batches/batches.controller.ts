import {
  Body,
  Controller,
  Get,
  Headers,
  HttpCode,
  HttpStatus,
  Param,
  Post,
  Query,
  Res,
} from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiHeader,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
} from '@nestjs/swagger';
import type { Response } from 'express';

import { CurrentPrincipal, type Principal, RequireScope } from '../auth/principal';
import type { BatchItemListResponse, BatchListResponse, BatchResponse } from './batch.view';
import { BatchReport, REPORT_CONTENT_TYPES } from './batch-report';
import { BatchesService } from './batches.service';
import { ListBatchesQuery, ListItemsQuery, ReportQuery } from './dto/batch-queries';
import { CreateBatchDto } from './dto/create-batch.dto';

const ERROR_SHAPE = 'Body: { "error": { "code", "message", "details" } }';

@ApiTags('batches')
@Controller('v1/batches')
export class BatchesController {
  constructor(
    private readonly batches: BatchesService,
    private readonly reports: BatchReport,
  ) {}

  @Post()
  @RequireScope('batches:write')
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description: 'Same key and same body → the same batch; same key, different body → 409',
  })
  @ApiAcceptedResponse({ description: 'The batch, queued (Location: /v1/batches/<id>)' })
  @ApiBadRequestResponse({
    description:
      'VALIDATION_FAILED, UNKNOWN_ALGORITHM, DUPLICATE_ALGORITHM, OUTPUT_LENGTH_NOT_SUPPORTED, INVALID_SOURCE, ' +
      `MANIFEST_LINE_INVALID (inline manifest or SUM file: the line and why), INVALID_IDEMPOTENCY_KEY. ${ERROR_SHAPE}`,
  })
  @ApiTooManyRequestsResponse({ description: `BATCH_LIMIT_REACHED. ${ERROR_SHAPE}` })
  async create(
    @Body() dto: CreateBatchDto,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @CurrentPrincipal() caller: Principal,
    @Res({ passthrough: true }) res: Response,
  ): Promise<BatchResponse> {
    const { batch, replayed } = await this.batches.submit(dto, caller.tenantId, idempotencyKey);
    res.location(`/v1/batches/${batch.id}`);
    if (replayed) res.setHeader('Idempotent-Replayed', 'true');
    return batch;
  }

  @Get()
  @RequireScope('batches:read')
  @ApiOkResponse({ description: 'Newest first, cursor pages' })
  list(
    @Query() query: ListBatchesQuery,
    @CurrentPrincipal() caller: Principal,
  ): Promise<BatchListResponse> {
    return this.batches.list(query, caller.tenantId);
  }

  @Get(':id')
  @RequireScope('batches:read')
  @ApiOkResponse({ description: 'Status, item and byte counts, rates, ETA, errors by code' })
  @ApiNotFoundResponse({ description: `BATCH_NOT_FOUND. ${ERROR_SHAPE}` })
  get(@Param('id') id: string, @CurrentPrincipal() caller: Principal): Promise<BatchResponse> {
    return this.batches.get(id, caller.tenantId);
  }

  @Get(':id/items')
  @RequireScope('batches:read')
  @ApiOkResponse({ description: 'Item rows in listing order, cursor pages' })
  @ApiNotFoundResponse({ description: `BATCH_NOT_FOUND. ${ERROR_SHAPE}` })
  items(
    @Param('id') id: string,
    @Query() query: ListItemsQuery,
    @CurrentPrincipal() caller: Principal,
  ): Promise<BatchItemListResponse> {
    return this.batches.listItems(id, caller.tenantId, query);
  }

  @Get(':id/report')
  @RequireScope('batches:read')
  @ApiOkResponse({ description: 'sha256sum, bsd, csv or jsonl, streamed' })
  @ApiNotFoundResponse({ description: `BATCH_NOT_FOUND. ${ERROR_SHAPE}` })
  async report(
    @Param('id') id: string,
    @Query() query: ReportQuery,
    @CurrentPrincipal() caller: Principal,
    @Res() res: Response,
  ): Promise<void> {
    const batch = await this.batches.findOrFail(id, caller.tenantId);
    const format = query.format ?? 'sha256sum';
    const options = this.reports.optionsFor(batch, query.algorithm);
    res.status(HttpStatus.OK).type(REPORT_CONTENT_TYPES[format]);
    await this.reports.stream(batch, format, options, res);
  }

  @Post(':id/cancel')
  @RequireScope('batches:write')
  @HttpCode(HttpStatus.OK)
  @ApiOkResponse({ description: 'The batch, canceled' })
  @ApiNotFoundResponse({ description: `BATCH_NOT_FOUND. ${ERROR_SHAPE}` })
  @ApiConflictResponse({ description: `BATCH_FINISHED. ${ERROR_SHAPE}` })
  cancel(@Param('id') id: string, @CurrentPrincipal() caller: Principal): Promise<BatchResponse> {
    return this.batches.cancel(id, caller.tenantId);
  }

  @Post(':id/retry')
  @RequireScope('batches:write')
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiAcceptedResponse({ description: 'The batch, running its failed items again' })
  @ApiNotFoundResponse({ description: `BATCH_NOT_FOUND. ${ERROR_SHAPE}` })
  @ApiConflictResponse({ description: `BATCH_NOT_RETRYABLE. ${ERROR_SHAPE}` })
  retry(@Param('id') id: string, @CurrentPrincipal() caller: Principal): Promise<BatchResponse> {
    return this.batches.retry(id, caller.tenantId);
  }
}
