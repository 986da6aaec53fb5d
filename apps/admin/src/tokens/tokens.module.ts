import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { EventsModule } from '../events/events.module.js';
import { TokensController } from './tokens.controller.js';
import { TokensRepository } from './tokens.repository.js';
import { TokensService } from './tokens.service.js';

@Module({
  imports: [AuditModule, EventsModule],
  controllers: [TokensController],
  providers: [TokensRepository, TokensService],
  exports: [TokensService],
})
export class TokensModule {}
