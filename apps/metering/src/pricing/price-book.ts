import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { MeteringEnv } from '@switchyard/config';
import { PriceTable, type ResolvedPrice, type TokenPrice } from '@switchyard/domain';
import { PricingRepository } from './pricing.repository.js';

/** A safety net for a `price.changed` event missed while Redis was away. */
const PERIODIC_REFRESH_MS = 5 * 60_000;
const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 30_000;
/** Bounds the memory of which unpriced models were already reported. */
const MAX_REPORTED_MODELS = 10_000;

/**
 * The model price table, cached in memory and read again on `price.changed`. Requests are
 * priced by their requested model (its most specific matching entry: docs/architecture.md,
 * "Model patterns"), then by the model the upstream resolved it to, and otherwise at
 * DEFAULT_MODEL_PRICE, which is logged once per model.
 */
@Injectable()
export class PriceBook implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(PriceBook.name);
  private readonly defaultPrice: TokenPrice;
  private table = new PriceTable([]);
  private readonly reported = new Set<string>();
  private generation = 0;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private markLoaded!: () => void;
  /** Resolves once the table has been read from the database. */
  readonly loaded: Promise<void> = new Promise((resolve) => (this.markLoaded = resolve));

  constructor(
    private readonly repository: PricingRepository,
    env: MeteringEnv,
  ) {
    this.defaultPrice = {
      inputPrice: env.DEFAULT_MODEL_PRICE,
      outputPrice: env.DEFAULT_MODEL_PRICE,
    };
  }

  onApplicationBootstrap(): void {
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), PERIODIC_REFRESH_MS).unref();
  }

  beforeApplicationShutdown(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  /**
   * Reads the table again. While the database cannot be read it retries with back-off,
   * until it succeeds or a newer refresh takes over. Never rejects.
   */
  async refresh(): Promise<void> {
    const generation = ++this.generation;
    let delay = RETRY_MIN_MS;
    while (!this.stopped && generation === this.generation) {
      try {
        const entries = await this.repository.findAllPrices();
        if (generation !== this.generation) return;
        this.table = new PriceTable(entries);
        this.reported.clear();
        this.markLoaded();
        this.logger.debug({ message: 'model prices loaded', entries: this.table.size });
        return;
      } catch (error) {
        this.logger.warn({
          message: 'could not read model prices; retrying',
          reason: error instanceof Error ? error.message.trim().split('\n').at(-1) : String(error),
          retryInMs: delay,
        });
        await new Promise((resolve) => setTimeout(resolve, delay).unref());
        delay = Math.min(delay * 2, RETRY_MAX_MS);
      }
    }
  }

  priceFor(model: string, upstreamModel: string | null): ResolvedPrice {
    const found =
      this.table.find(model) ??
      (upstreamModel !== null ? this.table.find(upstreamModel) : undefined);
    if (found) return found;
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
