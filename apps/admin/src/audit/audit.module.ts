import { Module } from '@nestjs/common';
import { GatewayStoreModule } from '@switchyard/gateway-store';
import { AuditController } from './audit.controller.js';
import { AuditService } from './audit.service.js';

/** Audit entries: written by every feature that changes something, read at `/api/audit`. */
@Module({
  controllers: [AuditController],
  imports: [GatewayStoreModule],
  providers: [AuditService],
  exports: [AuditService],
})
export class AuditModule {}
