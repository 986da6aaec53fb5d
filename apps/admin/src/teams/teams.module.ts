import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { BudgetsModule } from '../budgets/budgets.module.js';
import { EventsModule } from '../events/events.module.js';
import { TeamsController } from './teams.controller.js';
import { TeamsService } from './teams.service.js';

@Module({
  imports: [AuditModule, EventsModule, BudgetsModule],
  controllers: [TeamsController],
  providers: [TeamsService],
  exports: [TeamsService],
})
export class TeamsModule {}
