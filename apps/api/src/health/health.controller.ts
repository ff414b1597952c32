import { Controller, Get, HttpStatus, Res } from '@nestjs/common';
import { ApiOkResponse, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';

import { SkipRateLimit } from '../throttle/rate-limit.guard';
import { type HealthReport, HealthService } from './health.service';

@ApiTags('health')
@SkipRateLimit() // probes of load balancers and orchestrators are never rate limited
@Controller('health')
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get()
  @ApiOkResponse({ description: 'PostgreSQL and Redis answer' })
  @ApiServiceUnavailableResponse({ description: 'At least one of them does not; see checks' })
  async check(@Res({ passthrough: true }) res: Response): Promise<HealthReport> {
    const report = await this.health.check();
    res.status(report.status === 'ok' ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE);
    return report;
  }
}
