import { Body, Controller, Get, Param, Put, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentActor, EDITORS, Roles } from '../auth/access.decorators.js';
import { type Actor } from '../common/actor.js';
import { ApiNotFound, ApiValidationErrors } from '../common/api-docs.js';
import { IdParam } from '../common/id.pipe.js';
import {
  RequestLogDetail,
  RequestLogPage,
  RequestLogQuery,
  RequestLogSettings,
  SetRequestLogDto,
} from './request-log.dto.js';
import { RequestLogService } from './request-log.service.js';

// Owners and administrators only, reads included: the bodies are users' prompts and
// answers, which a viewer (who sees usage and costs) has no need of.

@ApiTags('request-log')
@Controller('api/request-log')
export class RequestLogController {
  constructor(private readonly log: RequestLogService) {}

  @Get()
  @Roles(...EDITORS)
  @ApiOperation({ summary: 'Logged requests, newest first (without their bodies)' })
  @ApiOkResponse({ type: RequestLogPage })
  @ApiValidationErrors()
  list(@Query() query: RequestLogQuery): Promise<RequestLogPage> {
    return this.log.list(query);
  }

  @Get('settings')
  @Roles(...EDITORS)
  @ApiOperation({ summary: 'The tokens and teams whose requests are logged' })
  @ApiOkResponse({ type: RequestLogSettings })
  settings(): Promise<RequestLogSettings> {
    return this.log.settings();
  }

  @Put('tokens/:id')
  @Roles(...EDITORS)
  @ApiOperation({
    summary: 'Turn the request log on or off for a token',
    description: 'Audited. Publishes `token.changed`, so edges apply it at once.',
  })
  @ApiOkResponse({ type: RequestLogSettings })
  @ApiValidationErrors()
  @ApiNotFound('token')
  setToken(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @Body() dto: SetRequestLogDto,
  ): Promise<RequestLogSettings> {
    return this.log.setToken(actor, id, dto.enabled);
  }

  @Put('teams/:id')
  @Roles(...EDITORS)
  @ApiOperation({
    summary: 'Turn the request log on or off for every token of a team',
    description: 'Audited. Publishes `token.changed` for each of the team’s tokens.',
  })
  @ApiOkResponse({ type: RequestLogSettings })
  @ApiValidationErrors()
  @ApiNotFound('team')
  setTeam(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @Body() dto: SetRequestLogDto,
  ): Promise<RequestLogSettings> {
    return this.log.setTeam(actor, id, dto.enabled);
  }

  @Get(':requestId')
  @Roles(...EDITORS)
  @ApiOperation({
    summary: 'A logged request with its bodies and its usage row',
    description: 'Each read is written to the audit log.',
  })
  @ApiOkResponse({ type: RequestLogDetail })
  @ApiNotFound('request log entry')
  get(
    @CurrentActor() actor: Actor,
    @Param('requestId') requestId: string,
  ): Promise<RequestLogDetail> {
    return this.log.get(actor, requestId);
  }
}
