import { Module } from '@nestjs/common';
import { GatewayStoreModule } from '@switchyard/gateway-store';
import { AuditModule } from '../audit/audit.module.js';
import { EventsModule } from '../events/events.module.js';
import { TokensController } from './tokens.controller.js';
import { TokensService } from './tokens.service.js';

@Module({
  imports: [AuditModule, EventsModule, GatewayStoreModule],
  controllers: [TokensController],
  providers: [TokensService],
  exports: [TokensService],
})
export class TokensModule {}
