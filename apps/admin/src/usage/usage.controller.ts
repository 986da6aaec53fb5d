import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { READERS, Roles } from '../auth/access.decorators.js';
import { ApiValidationErrors } from '../common/api-docs.js';
import {
  UsageLogPage,
  UsageLogsQuery,
  UsageSummaryQuery,
  UsageSummaryResponse,
} from './usage.dto.js';
import { UsageService } from './usage.service.js';

@ApiTags('usage')
@Controller('api/usage')
export class UsageController {
  constructor(private readonly usage: UsageService) {}

  @Get('logs')
  @Roles(...READERS)
  @ApiOperation({ summary: 'Usage log, newest first' })
  @ApiOkResponse({ type: UsageLogPage })
  @ApiValidationErrors()
  logs(@Query() query: UsageLogsQuery): Promise<UsageLogPage> {
    return this.usage.logs(query);
  }

  @Get('summary')
  @Roles(...READERS)
  @ApiOperation({
    summary: 'Usage totals grouped by day (UTC), model, token or channel',
    description: 'Over `[from, to)`, by default the last 30 days. At most 1000 groups.',
  })
  @ApiOkResponse({ type: UsageSummaryResponse })
  @ApiValidationErrors()
  summary(@Query() query: UsageSummaryQuery): Promise<UsageSummaryResponse> {
    return this.usage.summary(query);
  }
}
