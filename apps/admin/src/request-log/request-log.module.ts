import { Module } from '@nestjs/common';
import { GatewayStoreModule } from '@switchyard/gateway-store';
import { AuditModule } from '../audit/audit.module.js';
import { EventsModule } from '../events/events.module.js';
import { RequestLogController } from './request-log.controller.js';
import { RequestLogRepository } from './request-log.repository.js';
import { RequestLogService } from './request-log.service.js';

@Module({
  imports: [AuditModule, EventsModule, GatewayStoreModule],
  controllers: [RequestLogController],
  providers: [RequestLogRepository, RequestLogService],
})
export class RequestLogModule {}
