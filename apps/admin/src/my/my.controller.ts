import { Body, Controller, Delete, Get, HttpCode, Post, Query } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiGoneResponse,
  ApiConflictResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiTooManyRequestsResponse,
} from '@nestjs/swagger';
import { CurrentActor, MEMBERS, Roles } from '../auth/access.decorators.js';
import { type Actor } from '../common/actor.js';
import { ApiErrorResponse, ApiNotFound, ApiValidationErrors } from '../common/api-docs.js';
import { IdParam } from '../common/id.pipe.js';
import { PageQuery } from '../common/pagination.js';
import { BalanceEntryPage } from '../balances/balances.dto.js';
import { RedeemCodeDto, RedeemedResponse } from '../redemption/redemption.dto.js';
import { CreatedTokenResponse } from '../tokens/tokens.dto.js';
import { UsageLogPage } from '../usage/usage.dto.js';
import {
  CreateMyTokenDto,
  MyTeamList,
  MyTeamResponse,
  MyTokenPage,
  MyUsageQuery,
} from './my.dto.js';
import { MyService } from './my.service.js';

/**
 * A member's own view (role `member` only). A team they do not belong to is 404 on every
 * route, like one that does not exist.
 */
@ApiTags('my')
@Controller('api/my/teams')
@Roles(...MEMBERS)
export class MyController {
  constructor(private readonly my: MyService) {}

  @Get()
  @ApiOperation({ summary: 'The teams you belong to' })
  @ApiOkResponse({ type: MyTeamList })
  async teams(@CurrentActor() actor: Actor): Promise<MyTeamList> {
    return { items: await this.my.listTeams(actor) };
  }

  @Get(':teamId')
  @ApiOperation({
    summary: 'One of your teams, with the budgets that cover you (spend this period, reset time)',
  })
  @ApiOkResponse({ type: MyTeamResponse })
  @ApiNotFound('team of yours')
  team(@CurrentActor() actor: Actor, @IdParam('teamId') teamId: number): Promise<MyTeamResponse> {
    return this.my.team(actor, teamId);
  }

  @Get(':teamId/tokens')
  @ApiOperation({ summary: 'The tokens you made for this team' })
  @ApiOkResponse({ type: MyTokenPage })
  @ApiNotFound('team of yours')
  tokens(
    @CurrentActor() actor: Actor,
    @IdParam('teamId') teamId: number,
    @Query() query: PageQuery,
  ): Promise<MyTokenPage> {
    return this.my.listTokens(actor, teamId, query);
  }

  @Post(':teamId/tokens')
  @ApiOperation({
    summary: "Make a token for this team, within the team's policy",
    description:
      "Models within the team's, a rate limit no higher than its cap, an expiry no later than its maxTokenDays: beyond is 403 `forbidden` naming the field. The response carries `key` this once.",
  })
  @ApiCreatedResponse({ type: CreatedTokenResponse })
  @ApiValidationErrors()
  @ApiForbiddenResponse({
    type: ApiErrorResponse,
    description: '`forbidden`: beyond the team policy (names the field)',
  })
  @ApiNotFound('team of yours')
  createToken(
    @CurrentActor() actor: Actor,
    @IdParam('teamId') teamId: number,
    @Body() dto: CreateMyTokenDto,
  ): Promise<CreatedTokenResponse> {
    return this.my.createToken(actor, teamId, dto);
  }

  @Delete(':teamId/tokens/:id')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Revoke (delete) a token you made',
    description: 'Publishes `token.changed`.',
  })
  @ApiNoContentResponse()
  @ApiNotFound('token of yours')
  revokeToken(
    @CurrentActor() actor: Actor,
    @IdParam('teamId') teamId: number,
    @IdParam() id: number,
  ): Promise<void> {
    return this.my.revokeToken(actor, teamId, id);
  }

  @Get(':teamId/usage')
  @ApiOperation({ summary: "Your tokens' requests in this team, newest first" })
  @ApiOkResponse({ type: UsageLogPage })
  @ApiValidationErrors()
  @ApiNotFound('team of yours')
  usage(
    @CurrentActor() actor: Actor,
    @IdParam('teamId') teamId: number,
    @Query() query: MyUsageQuery,
  ): Promise<UsageLogPage> {
    return this.my.usageOf(actor, teamId, query);
  }

  @Get(':teamId/ledger')
  @ApiOperation({ summary: "The team's balance ledger, newest first" })
  @ApiOkResponse({ type: BalanceEntryPage })
  @ApiNotFound('team of yours')
  ledger(
    @CurrentActor() actor: Actor,
    @IdParam('teamId') teamId: number,
    @Query() query: PageQuery,
  ): Promise<BalanceEntryPage> {
    return this.my.ledger(actor, teamId, query);
  }

  @Post(':teamId/redeem')
  @HttpCode(200)
  @ApiOperation({
    summary: "Redeem a code for this team's balance",
    description:
      'Unknown code 404 `not_found`, used 409 `code_used`, expired 410 `code_expired`; after too many codes that did not work (per member and per address, in an hour) 429 `too_many_attempts`.',
  })
  @ApiOkResponse({ type: RedeemedResponse })
  @ApiValidationErrors()
  @ApiNotFoundResponse({
    type: ApiErrorResponse,
    description: '`not_found`: no such code, or not your team',
  })
  @ApiConflictResponse({
    type: ApiErrorResponse,
    description: '`code_used`, or `conflict`: not a balance team',
  })
  @ApiGoneResponse({ type: ApiErrorResponse, description: '`code_expired`' })
  @ApiTooManyRequestsResponse({ type: ApiErrorResponse, description: '`too_many_attempts`' })
  redeem(
    @CurrentActor() actor: Actor,
    @IdParam('teamId') teamId: number,
    @Body() dto: RedeemCodeDto,
  ): Promise<RedeemedResponse> {
    return this.my.redeem(actor, teamId, dto.code);
  }
}
