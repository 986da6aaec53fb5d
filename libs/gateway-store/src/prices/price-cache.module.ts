import { Module } from '@nestjs/common';
import { ModelPricesRepository } from './model-prices.repository.js';
import { PriceCache, PriceEventsController } from './price-cache.js';

/**
 * The price table in memory for the edge and metering, reloaded on `price.changed`. Needs
 * `SqlDatabaseModule` (global) and the messaging module for the event.
 */
@Module({
  controllers: [PriceEventsController],
  providers: [ModelPricesRepository, PriceCache],
  exports: [PriceCache],
})
export class PriceCacheModule {}
