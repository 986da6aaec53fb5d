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
import { allowedByList } from '@switchyard/domain';
import { type GatewayToken } from '../auth/token-directory.js';

// Which models have a price, for the `refuse` policy of UNPRICED_MODELS: a token with a
// quota may not spend it on a model metering would have to bill at its default price
// (docs/architecture.md, "Unpriced models"). Under `bill` nothing is read or checked.

export const UNPRICED_MODEL_POLICY = Symbol('UNPRICED_MODEL_POLICY');

const LIST_PRICED_MODELS = `SELECT model FROM "ModelPrice"`;
/** A safety net for a `price.changed` event missed while Redis was away. */
const PERIODIC_REFRESH_MS = 5 * 60_000;
const RETRY_MS = 1_000;

@Injectable()
export class PriceList implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('PriceList');
  /** Null until read: the edge serves (fails open) rather than refuse on prices it does not know. */
  private models: string[] | null = null;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    @Inject(UNPRICED_MODEL_POLICY) private readonly policy: UnpricedModelPolicy,
    @Inject(SQL_POOL) private readonly pool: SqlPool,
  ) {}

  onApplicationBootstrap(): void {
    if (this.policy !== 'refuse') return;
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), PERIODIC_REFRESH_MS).unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** Refuses an unpriced model to a token with a quota, when the operator chose so. */
  authorize(token: GatewayToken, model: string): void {
    if (this.policy !== 'refuse' || !token.hasQuota || this.models === null) return;
    if (this.models.length > 0 && allowedByList(this.models, model)) return;
    throw new GatewayError(
      'model_not_priced',
      `The model \`${model}\` has no price on this gateway, and tokens with a quota may only use priced models. Ask an administrator to set its price.`,
      'model',
    );
  }

  /** Reads the priced models again; keeps the last list (and retries) while Postgres is away. */
  async refresh(): Promise<void> {
    if (this.policy !== 'refuse') return;
    try {
      const { rows } = await this.pool.query<{ model: string }>(LIST_PRICED_MODELS);
      this.models = rows.map((row) => row.model);
    } catch (error) {
      this.logger.warn(`could not read model prices: ${(error as Error).message}`);
      setTimeout(() => void this.refresh(), RETRY_MS).unref();
    }
  }
}

@Controller()
export class PriceEventsController {
  constructor(private readonly prices: PriceList) {}

  @OnEvent(Events.PriceChanged)
  changed(): Promise<void> {
    return this.prices.refresh();
  }
}
