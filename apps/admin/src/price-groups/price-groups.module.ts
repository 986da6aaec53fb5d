import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { EventsModule } from '../events/events.module.js';
import { PriceGroupsController } from './price-groups.controller.js';
import { PriceGroupsService } from './price-groups.service.js';

@Module({
  imports: [AuditModule, EventsModule],
  controllers: [PriceGroupsController],
  providers: [PriceGroupsService],
})
export class PriceGroupsModule {}
