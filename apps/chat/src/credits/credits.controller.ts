import { Body, Controller, Get, HttpCode, Ip, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiResponse, ApiTags } from '@nestjs/swagger';
import { CurrentUser, type Principal } from '../auth/principal.js';
import { UsageDaysQuery } from '../usage/usage.dto.js';
import { CreditCodesService } from './credit-codes.service.js';
import { CreditOverviewService } from './credit-overview.service.js';
import {
  BalanceResponse,
  CreditSpendResponse,
  InviteResponse,
  LedgerPageResponse,
  LedgerQuery,
  RedeemDto,
  RedeemResponse,
} from './credits.dto.js';
import { CreditsService } from './credits.service.js';
import { InvitationsService } from './invitations.service.js';

// The signed-in user's own credits: every route reads the user from the session, never
// from the request, so nobody reaches another user's ledger here.

@ApiTags('credits')
@ApiBearerAuth()
@Controller('api/credits')
export class CreditsController {
  constructor(
    private readonly credits: CreditsService,
    private readonly codes: CreditCodesService,
    private readonly invitations: InvitationsService,
    private readonly overview: CreditOverviewService,
  ) {}

  /** The user's credits spent per model over the last `days` UTC days, most first. */
  @Get('spend')
  @ApiResponse({ status: 200, type: CreditSpendResponse })
  spend(
    @CurrentUser() principal: Principal,
    @Query() query: UsageDaysQuery,
  ): Promise<CreditSpendResponse> {
    return this.overview.spendOf(principal.id, query.days);
  }

  /** The user's invite link and what it earns. */
  @Get('invite')
  @ApiResponse({ status: 200, type: InviteResponse })
  invite(@CurrentUser() principal: Principal): Promise<InviteResponse> {
    return this.invitations.mine(principal);
  }

  @Get()
  @ApiResponse({ status: 200, type: BalanceResponse })
  balance(@CurrentUser() principal: Principal): Promise<BalanceResponse> {
    return this.credits.balance(principal);
  }

  /** The user's ledger, newest first. */
  @Get('ledger')
  @ApiResponse({ status: 200, type: LedgerPageResponse })
  ledger(
    @CurrentUser() principal: Principal,
    @Query() query: LedgerQuery,
  ): Promise<LedgerPageResponse> {
    return this.credits.ledger(principal.id, query);
  }

  @Post('redeem')
  @HttpCode(200)
  @ApiResponse({ status: 200, type: RedeemResponse })
  redeem(
    @CurrentUser() principal: Principal,
    @Body() dto: RedeemDto,
    @Ip() clientAddress: string,
  ): Promise<RedeemResponse> {
    return this.codes.redeem(principal, dto.code, clientAddress);
  }
}
