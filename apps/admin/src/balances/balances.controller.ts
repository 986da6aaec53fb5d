import { Body, Controller, Get, Post, Query } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
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
  AdjustBalanceDto,
  BalanceEntryPage,
  BalanceEntryResponse,
  CreditBalanceDto,
} from './balances.dto.js';
import { BalancesService } from './balances.service.js';

@ApiTags('teams')
@Controller('api/teams/:id/balance')
export class BalancesController {
  constructor(private readonly balances: BalancesService) {}

  @Post('credits')
  @Roles(...EDITORS)
  @ApiOperation({
    summary: "Credit a balance team's prepaid balance",
    description:
      'One ledger entry; the balance moves in the same transaction. Publishes `team.changed`.',
  })
  @ApiCreatedResponse({ type: BalanceEntryResponse })
  @ApiValidationErrors()
  @ApiNotFound('team')
  @ApiConflictResponse({
    type: ApiErrorResponse,
    description: '`conflict`: the team is not on a balance',
  })
  credit(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @Body() dto: CreditBalanceDto,
  ): Promise<BalanceEntryResponse> {
    return this.balances.credit(actor, id, dto);
  }

  @Post('adjustments')
  @Roles(...EDITORS)
  @ApiOperation({
    summary: "Adjust a balance team's balance up or down",
    description:
      'Refused with 409 `balance_below_zero` when it would go below zero. Publishes `team.changed`.',
  })
  @ApiCreatedResponse({ type: BalanceEntryResponse })
  @ApiValidationErrors()
  @ApiNotFound('team')
  @ApiConflictResponse({
    type: ApiErrorResponse,
    description: '`balance_below_zero` or `conflict`',
  })
  adjust(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @Body() dto: AdjustBalanceDto,
  ): Promise<BalanceEntryResponse> {
    return this.balances.adjust(actor, id, dto);
  }

  @Get('ledger')
  @Roles(...READERS)
  @ApiOperation({ summary: "The team's balance ledger, newest first" })
  @ApiOkResponse({ type: BalanceEntryPage })
  @ApiNotFound('team')
  ledger(@IdParam() id: number, @Query() query: PageQuery): Promise<BalanceEntryPage> {
    return this.balances.ledgerOf(id, query);
  }
}
