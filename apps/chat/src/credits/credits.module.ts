import { Module } from '@nestjs/common';
import { ModelsModule } from '../models/models.module.js';
import { ChatSettingsModule } from '../settings/chat-settings.module.js';
import { AdminCreditsController } from './admin-credits.controller.js';
import { CreditOverviewRepository } from './credit-overview.repository.js';
import { CreditOverviewService } from './credit-overview.service.js';
import { CreditHoldSweeper } from './credit-hold.sweeper.js';
import { CreditPlanScheduler } from './credit-plan.scheduler.js';
import { CreditPlansRepository } from './credit-plans.repository.js';
import { CreditPlansService } from './credit-plans.service.js';
import { CreditsClock } from './credits.clock.js';
import { CreditCodesRepository } from './credit-codes.repository.js';
import { CreditCodesService } from './credit-codes.service.js';
import { CreditsController } from './credits.controller.js';
import { CreditsRepository } from './credits.repository.js';
import { CreditsService } from './credits.service.js';
import { InvitationsRepository } from './invitations.repository.js';
import { InvitationsService } from './invitations.service.js';

/** Chat credits: balances, their ledger, redemption codes, plans, invitations (docs/credits.md). */
@Module({
  imports: [ChatSettingsModule, ModelsModule],
  controllers: [CreditsController, AdminCreditsController],
  providers: [
    CreditsClock,
    CreditsRepository,
    CreditsService,
    CreditCodesRepository,
    CreditCodesService,
    CreditHoldSweeper,
    CreditOverviewRepository,
    CreditOverviewService,
    CreditPlansRepository,
    CreditPlansService,
    CreditPlanScheduler,
    InvitationsRepository,
    InvitationsService,
  ],
  exports: [CreditsService, InvitationsService],
})
export class CreditsModule {}
