import { REPORT_CONTENT_SECURITY_POLICY } from '@hashq/bench';
import {
  Body,
  Controller,
  Get,
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
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiProduces,
  ApiQuery,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import type { Response } from 'express';

import { BenchmarksService } from './benchmarks.service';
import { CreateBenchmarkDto } from './create-benchmark.dto';

@ApiTags('benchmarks')
@Controller('v1/benchmarks')
export class BenchmarksController {
  constructor(private readonly benchmarks: BenchmarksService) {}

  @Post()
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiAcceptedResponse({
    description: 'The run, queued on bench-<arch> for a worker of that architecture',
  })
  @ApiBadRequestResponse({ description: 'VALIDATION_FAILED, UNKNOWN_ALGORITHM' })
  @ApiUnprocessableEntityResponse({
    description: 'BENCHMARK_NO_WORKER: no worker of that architecture seen lately',
  })
  @ApiTooManyRequestsResponse({
    description: 'BENCHMARK_LIMIT_REACHED: BENCHMARK_MAX_ACTIVE runs queued or running',
  })
  create(@Body() dto: CreateBenchmarkDto) {
    return this.benchmarks.create(dto);
  }

  @Get()
  @ApiOkResponse({ description: 'The latest 100 runs, newest first' })
  async list() {
    return { items: await this.benchmarks.list() };
  }

  @Get(':id')
  @ApiOkResponse({ description: 'A run: status, request and (when finished) the measurements' })
  @ApiNotFoundResponse({ description: 'BENCHMARK_NOT_FOUND' })
  get(@Param('id') id: string) {
    return this.benchmarks.get(id);
  }

  @Get(':id/report')
  @ApiProduces('text/html')
  @ApiQuery({
    name: 'compare',
    required: false,
    description: 'Another run id: the comparison view (that run = A, this one = B)',
  })
  @ApiOkResponse({ description: 'The HTML report (inline SVG plot, no scripts)' })
  @ApiConflictResponse({ description: 'BENCHMARK_NOT_FINISHED' })
  async report(
    @Param('id') id: string,
    @Res({ passthrough: true }) res: Response,
    @Query('compare') compare?: string,
  ) {
    const html = await this.benchmarks.report(id, compare);
    res.type('html').setHeader('Content-Security-Policy', REPORT_CONTENT_SECURITY_POLICY);
    return html;
  }
}
