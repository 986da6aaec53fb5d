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
import { SQL_POOL, type SqlPool } from '@switchyard/db/sql';
import { OnEvent } from '@switchyard/messaging';
import { mostSpecificMatch } from '@switchyard/routing';
import { type GatewayToken } from '../auth/token-directory.js';

// The price table as the edge needs it: which models have a price, for the `refuse` policy
// of UNPRICED_MODELS (a token with a quota may not spend it on a model metering would have
// to bill at its default price, docs/architecture.md, "Unpriced models"), and what a model
// costs, for the worst case a request holds against its token's quota before it is
// forwarded (quota/spend-holds.ts).

export const UNPRICED_MODEL_POLICY = Symbol('UNPRICED_MODEL_POLICY');

/** Micro-dollars per million tokens, as metering prices them. */
export interface ModelPrice {
  inputPrice: number;
  outputPrice: number;
}

const LIST_PRICES = `SELECT model, "inputPrice", "outputPrice" FROM "ModelPrice"`;
/** A safety net for a `price.changed` event missed while Redis was away. */
const PERIODIC_REFRESH_MS = 5 * 60_000;
const RETRY_MS = 1_000;

@Injectable()
export class PriceList implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('PriceList');
  /** Null until read: the edge serves (fails open) rather than refuse on prices it does not know. */
  private prices: Map<string, ModelPrice> | null = null;
  /** The entry that prices each model asked about: pattern matching once per model and table. */
  private readonly resolved = new Map<string, ModelPrice | null>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    @Inject(UNPRICED_MODEL_POLICY) private readonly policy: UnpricedModelPolicy,
    @Inject(SQL_POOL) private readonly pool: SqlPool,
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
  priceOf(model: string): ModelPrice | undefined {
    if (this.prices === null) return undefined;
    let price = this.resolved.get(model);
    if (price === undefined) {
      const entry = mostSpecificMatch(this.prices.keys(), model);
      price = entry === undefined ? null : this.prices.get(entry)!;
      if (this.resolved.size >= MAX_RESOLVED) this.resolved.clear();
      this.resolved.set(model, price);
    }
    return price ?? undefined;
  }

  /** Reads the prices again; keeps the last table (and retries) while Postgres is away. */
  async refresh(): Promise<void> {
    try {
      const { rows } = await this.pool.query<ModelPrice & { model: string }>(LIST_PRICES);
      this.prices = new Map(
        rows.map(({ model, inputPrice, outputPrice }) => [model, { inputPrice, outputPrice }]),
      );
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
