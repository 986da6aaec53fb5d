import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { AdminsController } from './admins.controller.js';
import { AdminsService } from './admins.service.js';

@Module({
  imports: [AuthModule, AuditModule],
  controllers: [AdminsController],
  providers: [AdminsService],
})
export class AdminsModule {}
