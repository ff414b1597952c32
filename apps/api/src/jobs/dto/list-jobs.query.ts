import { JOB_STATUSES, type JobStatus } from '@hashq/jobs';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';

import { PageQuery } from '../../common/page.query';

export { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../common/page.query';

export class ListJobsQuery extends PageQuery {
  @ApiPropertyOptional({ enum: JOB_STATUSES })
  @IsOptional()
  @IsIn(JOB_STATUSES)
  status?: JobStatus;
}
