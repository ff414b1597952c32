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
  ApiForbiddenResponse,
  ApiHeader,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import type { Response } from 'express';

import { CreateJobDto } from './dto/create-job.dto';
import { JobListResponse, JobResponse } from './dto/job.response';
import { ListJobsQuery } from './dto/list-jobs.query';
import { JobsService } from './jobs.service';

const ERROR_SHAPE = 'Body: { "error": { "code", "message", "details" } }';

@ApiTags('jobs')
@Controller('v1/jobs')
export class JobsController {
  constructor(private readonly jobs: JobsService) {}

  @Post()
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description: 'Same key and same body → the same job; same key, different body → 409',
  })
  @ApiAcceptedResponse({
    type: JobResponse,
    description: 'The job, queued (or the earlier one for a replayed Idempotency-Key)',
  })
  @ApiBadRequestResponse({
    description:
      'MALFORMED_JSON, INVALID_BODY, VALIDATION_FAILED, UNKNOWN_ALGORITHM, DUPLICATE_ALGORITHM, ' +
      'OUTPUT_LENGTH_NOT_SUPPORTED, CUSTOMIZATION_NOT_SUPPORTED, INVALID_EXPECTED_DIGEST, S3_CHECKSUM_NOT_SUPPORTED, ' +
      `INVALID_SOURCE, INVALID_IDEMPOTENCY_KEY. ${ERROR_SHAPE}`,
  })
  @ApiForbiddenResponse({
    description: `PATH_OUTSIDE_ROOTS, SOURCE_FORBIDDEN, SOURCE_ADDRESS_FORBIDDEN, SOURCE_NOT_ALLOWED (the tenant's hosts or buckets). ${ERROR_SHAPE}`,
  })
  @ApiUnprocessableEntityResponse({
    description: `SOURCE_NOT_FOUND, NOT_A_REGULAR_FILE. ${ERROR_SHAPE}`,
  })
  @ApiConflictResponse({ description: `IDEMPOTENCY_KEY_REUSED. ${ERROR_SHAPE}` })
  @ApiTooManyRequestsResponse({
    description: `TENANT_QUEUE_FULL (the tenant's max_queued_jobs; nothing created). ${ERROR_SHAPE}`,
  })
  @ApiServiceUnavailableResponse({
    description: `DATABASE_UNAVAILABLE, SOURCE_READ_FAILED (the file system failed; retry). ${ERROR_SHAPE}`,
  })
  async create(
    @Body() dto: CreateJobDto,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<JobResponse> {
    const { job, replayed } = await this.jobs.submit(dto, idempotencyKey);
    res.location(`/v1/jobs/${job.id}`);
    if (replayed) res.setHeader('Idempotent-Replayed', 'true');
    return job;
  }

  @Get()
  @ApiOkResponse({ type: JobListResponse, description: 'Newest first' })
  @ApiBadRequestResponse({
    description: `VALIDATION_FAILED (status, limit, cursor). ${ERROR_SHAPE}`,
  })
  list(@Query() query: ListJobsQuery): Promise<JobListResponse> {
    return this.jobs.list(query);
  }

  @Get(':id')
  @ApiOkResponse({ type: JobResponse })
  @ApiNotFoundResponse({ description: `JOB_NOT_FOUND. ${ERROR_SHAPE}` })
  get(@Param('id') id: string): Promise<JobResponse> {
    return this.jobs.get(id);
  }

  @Post(':id/cancel')
  @ApiOkResponse({
    type: JobResponse,
    description: 'The job is canceled (it was queued, or already canceled)',
  })
  @ApiAcceptedResponse({
    type: JobResponse,
    description:
      'The job is running: it stops within one chunk (its hash states are deleted when it ends)',
  })
  @ApiNotFoundResponse({ description: `JOB_NOT_FOUND. ${ERROR_SHAPE}` })
  @ApiConflictResponse({
    description: `JOB_FINISHED: the job already succeeded or failed. ${ERROR_SHAPE}`,
  })
  async cancel(
    @Param('id') id: string,
    @Res({ passthrough: true }) res: Response,
  ): Promise<JobResponse> {
    const { job, canceled } = await this.jobs.cancel(id);
    res.status(canceled ? HttpStatus.OK : HttpStatus.ACCEPTED);
    return job;
  }
}
