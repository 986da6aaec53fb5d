import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { AdminUsageController } from './admin-usage.controller.js';
import { UsageController } from './usage.controller.js';
import { UsageRepository } from './usage.repository.js';
import { UsageService } from './usage.service.js';

@Module({
  imports: [AuthModule],
  controllers: [UsageController, AdminUsageController],
  providers: [UsageRepository, UsageService],
})
export class UsageModule {}
