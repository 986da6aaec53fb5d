// `@switchyard/gateway-store/prices`: the price table in memory, without the Prisma client
// the rest of this library loads (the edge runs without it: docs/architecture.md).
export { ModelPricesRepository } from './prices/model-prices.repository.js';
export { PERIODIC_RELOAD_MS, PriceCache } from './prices/price-cache.js';
export { PriceCacheModule } from './prices/price-cache.module.js';
