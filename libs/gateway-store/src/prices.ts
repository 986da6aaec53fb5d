// `@switchyard/gateway-store/prices`: the price table in memory, and the shape every such
// copy of a table shares (`ReloadedCopy`), without the Prisma client the rest of this
// library loads (the edge runs without it: docs/architecture.md).
export { ModelPricesRepository } from './prices/model-prices.repository.js';
export { PriceCache } from './prices/price-cache.js';
export { ReloadedCopy } from './prices/reloaded-copy.js';
export { PriceCacheModule } from './prices/price-cache.module.js';
