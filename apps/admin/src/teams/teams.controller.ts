import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentActor, EDITORS, READERS, Roles } from '../auth/access.decorators.js';
import { type Actor } from '../common/actor.js';
import { ApiErrorResponse, ApiNotFound, ApiValidationErrors } from '../common/api-docs.js';
import { IdParam } from '../common/id.pipe.js';
import { PageQuery } from '../common/pagination.js';
import {
  AddMemberDto,
  CreateTeamDto,
  TeamDetailResponse,
  TeamPage,
  TeamResponse,
  UpdateTeamDto,
} from './teams.dto.js';
import { TeamsService } from './teams.service.js';

@ApiTags('teams')
@Controller('api/teams')
export class TeamsController {
  constructor(private readonly teams: TeamsService) {}

  @Get()
  @Roles(...READERS)
  @ApiOperation({ summary: 'List teams (by name)' })
  @ApiOkResponse({ type: TeamPage })
  @ApiValidationErrors()
  list(@Query() query: PageQuery): Promise<TeamPage> {
    return this.teams.list(query);
  }

  @Post()
  @Roles(...EDITORS)
  @ApiOperation({ summary: 'Create a team', description: 'Publishes `team.changed`.' })
  @ApiCreatedResponse({ type: TeamResponse })
  @ApiValidationErrors()
  @ApiConflictResponse({ type: ApiErrorResponse, description: '`conflict`: the name is taken' })
  create(@CurrentActor() actor: Actor, @Body() dto: CreateTeamDto): Promise<TeamResponse> {
    return this.teams.create(actor, dto);
  }

  @Get(':id')
  @Roles(...READERS)
  @ApiOperation({ summary: 'Read a team, with its members and budgets' })
  @ApiOkResponse({ type: TeamDetailResponse })
  @ApiNotFound('team')
  get(@IdParam() id: number): Promise<TeamDetailResponse> {
    return this.teams.detail(id);
  }

  @Patch(':id')
  @Roles(...EDITORS)
  @ApiOperation({
    summary: "Change a team's name or policy",
    description:
      "Only the fields given change. Tokens already made keep their settings; the edge applies the team's models and price group to them. Publishes `team.changed`.",
  })
  @ApiOkResponse({ type: TeamResponse })
  @ApiValidationErrors()
  @ApiNotFound('team')
  update(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @Body() dto: UpdateTeamDto,
  ): Promise<TeamResponse> {
    return this.teams.update(actor, id, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  @Roles(...EDITORS)
  @ApiOperation({
    summary: 'Delete a team',
    description:
      'Refused with 409 `team_has_tokens` while it has tokens (delete them first). Its budgets and ledger go with it.',
  })
  @ApiNoContentResponse()
  @ApiNotFound('team')
  @ApiConflictResponse({ type: ApiErrorResponse, description: '`team_has_tokens`' })
  delete(@CurrentActor() actor: Actor, @IdParam() id: number): Promise<void> {
    return this.teams.delete(actor, id);
  }

  @Post(':id/members')
  @Roles(...EDITORS)
  @ApiOperation({
    summary: 'Add an account of role `member` to the team',
    description: 'Publishes `team.changed`.',
  })
  @ApiCreatedResponse({ type: TeamResponse })
  @ApiValidationErrors()
  @ApiNotFound('team')
  @ApiConflictResponse({ type: ApiErrorResponse, description: '`conflict`: already a member' })
  addMember(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @Body() dto: AddMemberDto,
  ): Promise<TeamResponse> {
    return this.teams.addMember(actor, id, dto);
  }

  @Delete(':id/members/:userId')
  @HttpCode(204)
  @Roles(...EDITORS)
  @ApiOperation({
    summary: 'Remove a member from the team',
    description:
      "Their member budget in the team goes; tokens they made stay the team's (an administrator may delete them). Publishes `team.changed`.",
  })
  @ApiNoContentResponse()
  @ApiNotFound('team or member')
  removeMember(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @IdParam('userId') userId: number,
  ): Promise<void> {
    return this.teams.removeMember(actor, id, userId);
  }
}
