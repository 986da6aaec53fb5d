import {
  Controller,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { type UnpricedModelPolicy } from '@switchyard/config';
import { Events, GatewayError } from '@switchyard/contracts';
import { PriceTable, type TokenPrice } from '@switchyard/domain';
import { OnEvent } from '@switchyard/messaging';
import { type GatewayToken } from '../auth/token-directory.js';
import { PricesRepository } from './prices.repository.js';

// The price table as the edge needs it: which models have a price, for the `refuse` policy
// of UNPRICED_MODELS (a token with a quota may not spend it on a model metering would have
// to bill at its default price, docs/architecture.md, "Unpriced models"), and what a model
// costs, for the worst case a request holds against its token's quota before it is
// forwarded (quota/spend-holds.ts).

export const UNPRICED_MODEL_POLICY = Symbol('UNPRICED_MODEL_POLICY');

/** A safety net for a `price.changed` event missed while Redis was away. */
const PERIODIC_REFRESH_MS = 5 * 60_000;
const RETRY_MS = 1_000;

@Injectable()
export class PriceList implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('PriceList');
  /** Null until read: the edge serves (fails open) rather than refuse on prices it does not know. */
  private prices: PriceTable | null = null;
  /** The price of each model asked about: pattern matching once per model and table. */
  private readonly resolved = new Map<string, TokenPrice | null>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    @Inject(UNPRICED_MODEL_POLICY) private readonly policy: UnpricedModelPolicy,
    private readonly repository: PricesRepository,
  ) {}

  onApplicationBootstrap(): void {
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), PERIODIC_REFRESH_MS).unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** Refuses an unpriced model to a token with a quota, when the operator chose so. */
  authorize(token: GatewayToken, model: string): void {
    if (this.policy !== 'refuse' || !token.hasQuota || this.prices === null) return;
    if (this.priceOf(model)) return;
    throw new GatewayError(
      'model_not_priced',
      `The model \`${model}\` has no price on this gateway, and tokens with a quota may only use priced models. Ask an administrator to set its price.`,
      'model',
    );
  }

  /** The price metering will bill the model at; undefined when it has none, or none is known yet. */
  priceOf(model: string): TokenPrice | undefined {
    if (this.prices === null) return undefined;
    let price = this.resolved.get(model);
    if (price === undefined) {
      // Metering's rule, from the same table (docs/architecture.md, "Model patterns").
      price = this.prices.find(model) ?? null;
      if (this.resolved.size >= MAX_RESOLVED) this.resolved.clear();
      this.resolved.set(model, price);
    }
    return price ?? undefined;
  }

  /** Reads the prices again; keeps the last table (and retries) while Postgres is away. */
  async refresh(): Promise<void> {
    try {
      this.prices = new PriceTable(await this.repository.list());
      this.resolved.clear();
    } catch (error) {
      this.logger.warn(`could not read model prices: ${(error as Error).message}`);
      setTimeout(() => void this.refresh(), RETRY_MS).unref();
    }
  }
}

/** Model names are the client's to choose: the memo of resolved prices stays bounded. */
const MAX_RESOLVED = 10_000;

@Controller()
export class PriceEventsController {
  constructor(private readonly prices: PriceList) {}

  @OnEvent(Events.PriceChanged)
  changed(): Promise<void> {
    return this.prices.refresh();
  }
}
