import { Injectable, Logger } from '@nestjs/common';
import { MeteringEnv } from '@switchyard/config';
import { type PriceTable, type ResolvedPrice, type TokenPrice } from '@switchyard/domain';
import { PriceCache } from '@switchyard/gateway-store/prices';

/** Bounds the memory of which unpriced models were already reported. */
const MAX_REPORTED_MODELS = 10_000;

/**
 * What metering charges: the price table's rule (`PriceTable.priceFor`, the one the edge
 * holds by: docs/architecture.md, "Prices"), and otherwise DEFAULT_MODEL_PRICE, which is
 * logged once per model and table.
 */
@Injectable()
export class PriceBook {
  private readonly logger = new Logger(PriceBook.name);
  private readonly defaultPrice: TokenPrice;
  private readonly reported = new Set<string>();
  /** The table `reported` is about: a reload may have priced them. */
  private reportedFor: PriceTable | null = null;

  constructor(
    private readonly prices: PriceCache,
    env: MeteringEnv,
  ) {
    this.defaultPrice = {
      inputPrice: env.DEFAULT_MODEL_PRICE,
      outputPrice: env.DEFAULT_MODEL_PRICE,
    };
  }

  /** Resolves once the table has been read from the database. */
  get loaded(): Promise<void> {
    return this.prices.loaded;
  }

  priceFor(model: string, upstreamModel: string | null): ResolvedPrice {
    const found = this.prices.priceFor(model, upstreamModel);
    if (found) return found;
    if (this.reportedFor !== this.prices.table) {
      this.reportedFor = this.prices.table;
      this.reported.clear();
    }
    if (!this.reported.has(model)) {
      if (this.reported.size >= MAX_REPORTED_MODELS) this.reported.clear();
      this.reported.add(model);
      this.logger.warn({
        message: 'model has no price; billing it at DEFAULT_MODEL_PRICE',
        model,
        upstreamModel,
        pricePerMillion: this.defaultPrice.inputPrice,
      });
    }
    return { ...this.defaultPrice, match: 'default', entry: null };
  }
}
