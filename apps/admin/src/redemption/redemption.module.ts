import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { BalancesModule } from '../balances/balances.module.js';
import { EventsModule } from '../events/events.module.js';
import { RedemptionController } from './redemption.controller.js';
import { RedemptionService } from './redemption.service.js';

@Module({
  imports: [AuditModule, EventsModule, BalancesModule],
  controllers: [RedemptionController],
  providers: [RedemptionService],
  exports: [RedemptionService],
})
export class RedemptionModule {}
