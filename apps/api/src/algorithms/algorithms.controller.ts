import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';

import { RequireScope } from '../auth/principal';
import { AlgorithmListResponse } from './algorithm.response';
import { AlgorithmsService } from './algorithms.service';

@ApiTags('algorithms')
@Controller('v1/algorithms')
export class AlgorithmsController {
  constructor(private readonly algorithms: AlgorithmsService) {}

  @Get()
  @RequireScope('jobs:read')
  @ApiOkResponse({ type: AlgorithmListResponse, description: 'Every algorithm a job may use' })
  list(): AlgorithmListResponse {
    return {
      items: this.algorithms
        .list()
        .map(({ name, digestLength, blockSize, xof, customizable, standard, implementation }) => ({
          name,
          digestLength,
          blockSize,
          xof,
          customizable,
          standard,
          implementation,
        })),
    };
  }
}
