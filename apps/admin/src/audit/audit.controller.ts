import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { EDITORS, Roles } from '../auth/access.decorators.js';
import { AuditPage, AuditQuery } from './audit.dto.js';
import { AuditService } from './audit.service.js';

@ApiTags('audit')
@Controller('api/audit')
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  @Roles(...EDITORS)
  @ApiOperation({ summary: 'Audit log, newest first' })
  @ApiOkResponse({ type: AuditPage })
  list(@Query() query: AuditQuery): Promise<AuditPage> {
    return this.audit.list(query);
  }
}
