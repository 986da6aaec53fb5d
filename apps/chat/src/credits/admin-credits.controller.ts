import { Body, Controller, Get, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiResponse, ApiTags } from '@nestjs/swagger';
import { CurrentUser, type Principal } from '../auth/principal.js';
import { IntIdPipe } from '../common/id.pipes.js';
import { UsageDaysQuery } from '../usage/usage.dto.js';
import { CreditOverviewService } from './credit-overview.service.js';
import { CreditCodesService } from './credit-codes.service.js';
import { CreditPlansService } from './credit-plans.service.js';
import { CreditsClock } from './credits.clock.js';
import {
  AdjustCreditsDto,
  AssignPlanDto,
  CreatePlanDto,
  PlanListResponse,
  PlanResponse,
  SubscriptionResponse,
  UpdatePlanDto,
  CodeBatchPageResponse,
  CodeBatchQuery,
  CreateCodesDto,
  CreatedCodesResponse,
  CreditEntryResponse,
  CreditOverviewResponse,
  LedgerPageResponse,
  LedgerQuery,
} from './credits.dto.js';
import { CreditsService } from './credits.service.js';

@ApiTags('admin: credits')
@ApiBearerAuth()
@Controller('api/admin')
export class AdminCreditsController {
  constructor(
    private readonly credits: CreditsService,
    private readonly codes: CreditCodesService,
    private readonly plans: CreditPlansService,
    private readonly clock: CreditsClock,
    private readonly overview: CreditOverviewService,
  ) {}

  /** Credits granted and spent per UTC day (last `days`, today included), spent per model. */
  @Get('credits/overview')
  @ApiResponse({ status: 200, type: CreditOverviewResponse })
  creditOverview(@Query() query: UsageDaysQuery): Promise<CreditOverviewResponse> {
    return this.overview.overviewOf(query.days);
  }

  @Get('users/:id/credits')
  @ApiResponse({ status: 200, type: LedgerPageResponse })
  ledger(
    @Param('id', IntIdPipe) id: number,
    @Query() query: LedgerQuery,
  ): Promise<LedgerPageResponse> {
    return this.credits.ledger(id, query);
  }

  /** Adds or takes away credits with a reason; refused below zero unless `force`. */
  @Post('users/:id/credits')
  @ApiResponse({ status: 201, type: CreditEntryResponse })
  adjust(
    @CurrentUser() actor: Principal,
    @Param('id', IntIdPipe) id: number,
    @Body() dto: AdjustCreditsDto,
  ): Promise<CreditEntryResponse> {
    return this.credits.adjust(actor, id, dto);
  }

  @Get('credit-codes')
  @ApiResponse({ status: 200, type: CodeBatchPageResponse })
  batches(@Query() query: CodeBatchQuery): Promise<CodeBatchPageResponse> {
    return this.codes.list(query);
  }

  /** Makes a batch of codes; the answer is the only time the codes are shown. */
  @Post('credit-codes')
  @ApiResponse({ status: 201, type: CreatedCodesResponse })
  createCodes(
    @CurrentUser() actor: Principal,
    @Body() dto: CreateCodesDto,
  ): Promise<CreatedCodesResponse> {
    return this.codes.create(actor, dto);
  }

  @Get('credit-plans')
  @ApiResponse({ status: 200, type: PlanListResponse })
  listPlans(): Promise<PlanListResponse> {
    return this.plans.list();
  }

  @Post('credit-plans')
  @ApiResponse({ status: 201, type: PlanResponse })
  createPlan(@Body() dto: CreatePlanDto): Promise<PlanResponse> {
    return this.plans.create(dto);
  }

  /** Renames, reprices, changes the included models of, disables or enables a plan. */
  @Patch('credit-plans/:id')
  @ApiResponse({ status: 200, type: PlanResponse })
  updatePlan(
    @Param('id', IntIdPipe) id: number,
    @Body() dto: UpdatePlanDto,
  ): Promise<PlanResponse> {
    return this.plans.update(id, dto, this.clock.now());
  }

  @Get('users/:id/credit-plan')
  @ApiResponse({ status: 200, type: SubscriptionResponse })
  subscription(@Param('id', IntIdPipe) id: number): Promise<SubscriptionResponse> {
    return this.plans.subscription(id);
  }

  /** Puts the user on a plan, topped up at once for this period; `planId: null` ends it. */
  @Put('users/:id/credit-plan')
  @ApiResponse({ status: 200, type: SubscriptionResponse })
  assignPlan(
    @CurrentUser() actor: Principal,
    @Param('id', IntIdPipe) id: number,
    @Body() dto: AssignPlanDto,
  ): Promise<SubscriptionResponse> {
    return this.plans.assign(actor, id, dto, this.clock.now());
  }
}
