import { Controller } from '@nestjs/common';
import { Events, PriceChangedEvent } from '@switchyard/contracts';
import { OnEvent } from '@switchyard/messaging';
import { PriceBook } from './price-book.js';

@Controller()
export class PriceEventsController {
  constructor(private readonly prices: PriceBook) {}

  /** Any change reloads the whole table: it is small, and a reload is never half-applied. */
  @OnEvent(Events.PriceChanged)
  async priceChanged(_event: PriceChangedEvent): Promise<void> {
    await this.prices.refresh();
  }
}
