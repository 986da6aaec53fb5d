import { Module } from '@nestjs/common';
import { GatewayStoreModule } from '@switchyard/gateway-store';
import { AuditModule } from '../audit/audit.module.js';
import { EventsModule } from '../events/events.module.js';
import { BalancesController } from './balances.controller.js';
import { BalancesService } from './balances.service.js';

@Module({
  imports: [AuditModule, EventsModule, GatewayStoreModule],
  controllers: [BalancesController],
  providers: [BalancesService],
  exports: [BalancesService],
})
export class BalancesModule {}
