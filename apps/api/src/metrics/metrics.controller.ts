import { Controller, Get, Res } from '@nestjs/common';
import { ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';

import { MetricsService } from './metrics.service';

@ApiTags('metrics')
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  @Get()
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'Prometheus text format' })
  async scrape(@Res() res: Response): Promise<void> {
    const body = await this.metrics.metrics();
    res.setHeader('Content-Type', this.metrics.contentType);
    res.send(body);
  }
}
