import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { READERS, Roles } from '../auth/access.decorators.js';
import { ApiValidationErrors } from '../common/api-docs.js';
import { ChannelHealthResponse, UsageSeriesQuery, UsageSeriesResponse } from './overview.dto.js';
import { OverviewService } from './overview.service.js';

@ApiTags('overview')
@Controller('api/overview')
export class OverviewController {
  constructor(private readonly overview: OverviewService) {}

  @Get('series')
  @Roles(...READERS)
  @ApiOperation({
    summary: 'Requests, failures, tokens and cost over time, split by model, channel or token',
    description:
      '24h in hours, 7d in 6-hour buckets, 30d in days, each ending with the bucket that holds `to`.',
  })
  @ApiOkResponse({ type: UsageSeriesResponse })
  @ApiValidationErrors()
  series(@Query() query: UsageSeriesQuery): Promise<UsageSeriesResponse> {
    return this.overview.series(query);
  }

  @Get('health')
  @Roles(...READERS)
  @ApiOperation({
    summary: 'Each channel and key as routing sees it now',
    description:
      'Status and reason from the database; cool-downs and open breakers from the routing snapshot the router last published.',
  })
  @ApiOkResponse({ type: ChannelHealthResponse })
  health(): Promise<ChannelHealthResponse> {
    return this.overview.health();
  }
}
