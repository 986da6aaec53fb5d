import { Module } from '@nestjs/common';
import { FallbackEventsController, FallbackTable } from './fallback-table.js';
import { ModelFallbacksRepository } from './model-fallbacks.repository.js';

/** The models' fallback lists in memory; needs `SqlDatabaseModule` and the messaging module. */
@Module({
  controllers: [FallbackEventsController],
  providers: [ModelFallbacksRepository, FallbackTable],
  exports: [FallbackTable],
})
export class FallbacksModule {}
