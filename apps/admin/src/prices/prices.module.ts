import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { EventsModule } from '../events/events.module.js';
import { PricesController } from './prices.controller.js';
import { PricesRepository } from './prices.repository.js';
import { PricesService } from './prices.service.js';

@Module({
  imports: [AuditModule, EventsModule],
  controllers: [PricesController],
  providers: [PricesRepository, PricesService],
})
export class PricesModule {}
