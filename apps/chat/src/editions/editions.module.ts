import { Module } from '@nestjs/common';
import { EditionsController } from './editions.controller.js';
import { EditionsRepository } from './editions.repository.js';
import { EditionsService } from './editions.service.js';

@Module({
  controllers: [EditionsController],
  providers: [EditionsRepository, EditionsService],
  exports: [EditionsService],
})
export class EditionsModule {}
