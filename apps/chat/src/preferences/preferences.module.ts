import { Module } from '@nestjs/common';
import { ModelsModule } from '../models/models.module.js';
import { PreferencesController } from './preferences.controller.js';
import { PreferencesRepository } from './preferences.repository.js';
import { PreferencesService } from './preferences.service.js';

@Module({
  imports: [ModelsModule],
  controllers: [PreferencesController],
  providers: [PreferencesRepository, PreferencesService],
})
export class PreferencesModule {}
