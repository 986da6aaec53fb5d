import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiResponse, ApiTags } from '@nestjs/swagger';
import { AdminUsageResponse, UsageDaysQuery } from './usage.dto.js';
import { UsageService } from './usage.service.js';

// Under /api/admin, so the session guard lets administrators only through.
@ApiTags('admin: usage')
@ApiBearerAuth()
@Controller('api/admin/usage')
export class AdminUsageController {
  constructor(private readonly usage: UsageService) {}

  /** Every user's usage per UTC day and the top models, deleted conversations included. */
  @Get()
  @ApiResponse({ status: 200, type: AdminUsageResponse })
  overview(@Query() query: UsageDaysQuery): Promise<AdminUsageResponse> {
    return this.usage.everyone(query.days);
  }
}
