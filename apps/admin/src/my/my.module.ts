import { Module } from '@nestjs/common';
import { GatewayStoreModule } from '@switchyard/gateway-store';
import { AuditModule } from '../audit/audit.module.js';
import { BudgetsModule } from '../budgets/budgets.module.js';
import { EventsModule } from '../events/events.module.js';
import { RedemptionModule } from '../redemption/redemption.module.js';
import { TeamsModule } from '../teams/teams.module.js';
import { UsageModule } from '../usage/usage.module.js';
import { MyController } from './my.controller.js';
import { MyService } from './my.service.js';

/** A member's own teams, tokens, usage, budgets and redemptions (docs/teams.md, "Members"). */
@Module({
  imports: [
    AuditModule,
    EventsModule,
    GatewayStoreModule,
    BudgetsModule,
    TeamsModule,
    UsageModule,
    RedemptionModule,
  ],
  controllers: [MyController],
  providers: [MyService],
})
export class MyModule {}
