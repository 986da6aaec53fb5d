import { Module } from '@nestjs/common';
import { EditionsModule } from '../editions/editions.module.js';
import { ApiKeysController } from './api-keys.controller.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import { ApiKeysService } from './api-keys.service.js';

/** The records and their administration; no Redis, so the CLI can use it too. */
@Module({
  imports: [EditionsModule],
  controllers: [ApiKeysController],
  providers: [ApiKeysRepository, ApiKeysService],
  exports: [ApiKeysRepository, ApiKeysService, EditionsModule],
})
export class ApiKeysModule {}
