import {
  Controller,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { Events } from '@switchyard/contracts';
import { PriceTable, type ResolvedPrice } from '@switchyard/domain';
import { OnEvent } from '@switchyard/messaging';
import { ModelPricesRepository } from './model-prices.repository.js';

/** A safety net for a `price.changed` event missed while Redis was away. */
export const PERIODIC_RELOAD_MS = 5 * 60_000;
const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 30_000;

/**
 * The model price table in memory, the one copy the edge and metering each keep: read at
 * start, on `price.changed` and every 5 minutes (docs/architecture.md, "Prices"). Prices
 * resolve by `PriceTable.priceFor`, so an edge's hold and metering's charge use one rule.
 */
@Injectable()
export class PriceCache implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('PriceCache');
  private current: PriceTable | null = null;
  private generation = 0;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private markLoaded!: () => void;
  /** Resolves once the table has been read from the database. */
  readonly loaded: Promise<void> = new Promise((resolve) => (this.markLoaded = resolve));

  constructor(private readonly repository: ModelPricesRepository) {}

  onApplicationBootstrap(): void {
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), PERIODIC_RELOAD_MS).unref();
  }

  beforeApplicationShutdown(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  /** The table last read; null until the first read succeeds. A reload replaces it whole. */
  get table(): PriceTable | null {
    return this.current;
  }

  /** `PriceTable.priceFor` on the table last read; undefined before the first read. */
  priceFor(requested: string, upstream: string | null): ResolvedPrice | undefined {
    return this.current?.priceFor(requested, upstream);
  }

  /**
   * Reads the table again, keeping the last one while the database cannot be read and
   * retrying with back-off until it succeeds or a newer refresh takes over. Never rejects.
   */
  async refresh(): Promise<void> {
    const generation = ++this.generation;
    let delay = RETRY_MIN_MS;
    while (!this.stopped && generation === this.generation) {
      try {
        const entries = await this.repository.list();
        if (generation !== this.generation) return;
        this.current = new PriceTable(entries);
        this.markLoaded();
        this.logger.debug({ message: 'model prices loaded', entries: this.current.size });
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
