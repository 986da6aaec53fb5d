import { Module } from '@nestjs/common';
import { ModelsModule } from '../models/models.module.js';
import { ChatSettingsController } from './chat-settings.controller.js';
import { ChatSettingsRepository } from './chat-settings.repository.js';
import { ChatSettingsService } from './chat-settings.service.js';

/** The chat app's run-time settings, on one admin page (docs/credits.md, "Settings"). */
@Module({
  imports: [ModelsModule],
  controllers: [ChatSettingsController],
  providers: [ChatSettingsRepository, ChatSettingsService],
  exports: [ChatSettingsService],
})
export class ChatSettingsModule {}
