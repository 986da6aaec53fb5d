import { Module } from '@nestjs/common';
import { AdminModelsController } from './admin-models.controller.js';
import { ModelsController } from './models.controller.js';
import { ModelsRepository } from './models.repository.js';
import { ModelsService } from './models.service.js';

@Module({
  controllers: [ModelsController, AdminModelsController],
  providers: [ModelsRepository, ModelsService],
  exports: [ModelsRepository, ModelsService],
})
export class ModelsModule {}
