import { Body, Controller, Delete, Get, HttpCode, Put, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentActor, EDITORS, READERS, Roles } from '../auth/access.decorators.js';
import { type Actor } from '../common/actor.js';
import { ApiNotFound, ApiValidationErrors } from '../common/api-docs.js';
import { IdParam } from '../common/id.pipe.js';
import { BudgetPage, ListBudgetsQuery, SetBudgetDto, SetBudgetResponse } from './budgets.dto.js';
import { BudgetsService } from './budgets.service.js';

@ApiTags('budgets')
@Controller('api/budgets')
export class BudgetsController {
  constructor(private readonly budgets: BudgetsService) {}

  @Get()
  @Roles(...READERS)
  @ApiOperation({
    summary: 'Every budget with its spend this period, closest to its cap first',
    description: 'Sorted by `percent` (highest first), then by what remains (least first).',
  })
  @ApiOkResponse({ type: BudgetPage })
  @ApiValidationErrors()
  list(@Query() query: ListBudgetsQuery): Promise<BudgetPage> {
    return this.budgets.list(query);
  }

  @Put()
  @Roles(...EDITORS)
  @ApiOperation({
    summary: 'Set the budget of a token, a member within a team, a team or the gateway',
    description:
      'Creates it or replaces its amount, period and soft threshold. Publishes `budget.changed` `{teamId?, tokenId?}`.',
  })
  @ApiOkResponse({ type: SetBudgetResponse })
  @ApiValidationErrors()
  @ApiNotFound('token or team')
  set(@CurrentActor() actor: Actor, @Body() dto: SetBudgetDto): Promise<SetBudgetResponse> {
    return this.budgets.set(actor, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  @Roles(...EDITORS)
  @ApiOperation({ summary: 'Clear a budget', description: 'Publishes `budget.changed`.' })
  @ApiNoContentResponse()
  @ApiNotFound('budget')
  clear(@CurrentActor() actor: Actor, @IdParam() id: number): Promise<void> {
    return this.budgets.clear(actor, id);
  }
}
