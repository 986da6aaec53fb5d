import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiResponse, ApiTags } from '@nestjs/swagger';
import { CurrentUser, type Principal } from '../auth/principal.js';
import { UsageResponse } from '../users/users.dto.js';
import { UsageDaysQuery, UsageDaysResponse } from './usage.dto.js';
import { UsageService } from './usage.service.js';

@ApiTags('usage')
@ApiBearerAuth()
@Controller('api/usage')
export class UsageController {
  constructor(private readonly usage: UsageService) {}

  /** The signed-in user's totals over every conversation, deleted ones included. */
  @Get()
  @ApiResponse({ status: 200, type: UsageResponse })
  totals(@CurrentUser() principal: Principal): Promise<UsageResponse> {
    return this.usage.totals(principal);
  }

  /** The signed-in user's usage per UTC day, deleted conversations included. */
  @Get('daily')
  @ApiResponse({ status: 200, type: UsageDaysResponse })
  daily(
    @CurrentUser() principal: Principal,
    @Query() query: UsageDaysQuery,
  ): Promise<UsageDaysResponse> {
    return this.usage.daily(principal, query.days);
  }
}
