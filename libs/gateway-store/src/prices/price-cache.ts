import { Controller, Injectable } from '@nestjs/common';
import { Events } from '@switchyard/contracts';
import { PriceTable, type ResolvedPrice } from '@switchyard/domain';
import { OnEvent } from '@switchyard/messaging';
import { ModelPricesRepository } from './model-prices.repository.js';
import { ReloadedCopy } from './reloaded-copy.js';

/**
 * The model price table in memory, the one copy the edge and metering each keep: read at
 * start, on `price.changed` and every 5 minutes (docs/architecture.md, "Prices"). Prices
 * resolve by `PriceTable.priceFor`, so an edge's hold and metering's charge use one rule.
 */
@Injectable()
export class PriceCache extends ReloadedCopy<PriceTable> {
  constructor(private readonly repository: ModelPricesRepository) {
    super('model prices');
  }

  protected async read(): Promise<PriceTable> {
    return new PriceTable(await this.repository.list());
  }

  /** The table last read; null until the first read succeeds. A reload replaces it whole. */
  get table(): PriceTable | null {
    return this.copy;
  }

  /** `PriceTable.priceFor` on the table last read; undefined before the first read. */
  priceFor(requested: string, upstream: string | null): ResolvedPrice | undefined {
    return this.copy?.priceFor(requested, upstream);
  }
}

@Controller()
export class PriceEventsController {
  constructor(private readonly prices: PriceCache) {}

  /** Any change reloads the whole table: it is small, and a reload is never half-applied. */
  @OnEvent(Events.PriceChanged)
  priceChanged(): Promise<void> {
    return this.prices.refresh();
  }
}
