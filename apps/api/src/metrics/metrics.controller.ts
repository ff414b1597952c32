import { Controller, Get, Res } from '@nestjs/common';
import { ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';

import { PublicWhenOpen } from '../auth/auth.guard';
import { RequireScope } from '../auth/principal';
import { MetricsService } from './metrics.service';

@ApiTags('metrics')
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  @Get()
  @RequireScope('admin')
  @PublicWhenOpen('metrics')
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'Prometheus text format' })
  async scrape(@Res() res: Response): Promise<void> {
    const body = await this.metrics.metrics();
    res.setHeader('Content-Type', this.metrics.contentType);
    res.send(body);
  }
}
