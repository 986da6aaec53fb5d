import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { EventsModule } from '../events/events.module.js';
import { ModelFallbacksController } from './model-fallbacks.controller.js';
import { ModelFallbacksRepository } from './model-fallbacks.repository.js';
import { ModelFallbacksService } from './model-fallbacks.service.js';

@Module({
  imports: [AuditModule, EventsModule],
  controllers: [ModelFallbacksController],
  providers: [ModelFallbacksRepository, ModelFallbacksService],
})
export class ModelFallbacksModule {}
