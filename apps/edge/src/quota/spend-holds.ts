import { Injectable, Logger } from '@nestjs/common';
import { GatewayError, type GatewayEndpoint } from '@switchyard/contracts';
import { Counter, Registry } from '@switchyard/observability';
import { type TokenPrice } from '@switchyard/domain';
import { SpendLedger, spendAccount } from '@switchyard/spend';
import { TokensRepository } from '../auth/tokens.repository.js';
import { PriceList } from '../pricing/price-list.js';
import { type Exchange, type RoutedExchange } from '../proxy/exchange.js';
import { completionBudget, type ParsedBody } from '../proxy/request-body.js';

// The quota step of the hot path (docs/architecture.md, "Spend holds"): before a request
// is forwarded, its worst-case cost is held against its token's quota in the shared spend
// ledger, so requests in flight together cannot spend the quota many times over. Metering
// settles the hold when it commits the request's usage; a request that fails here gives
// its hold back at once.
//
// Nothing is asked of Redis for a token without a quota, nor for a model without a price
// (metering bills it at its default price, as before holds). While Redis cannot be asked,
// requests are served unheld (fail open, docs/reliability.md): the token is still refused
// once metering finds its quota spent.

/** A request that names no output limit may produce this many tokens (docs/architecture.md). */
export const DEFAULT_OUTPUT_TOKENS = 4_096;
/** What metering bills an image without token usage: this many completion tokens. */
const TOKENS_PER_IMAGE = 1_000;
const PER_MILLION = 1_000_000n;
/** How often an unreachable ledger is logged: every request would flood the log. */
const WARN_EVERY_MS = 10_000;

/**
 * The most the request can cost, in micro-dollars: every byte of the body taken as a
 * prompt token (a token is at least a byte of text), plus its output limit or
 * `DEFAULT_OUTPUT_TOKENS`, at the model's price. Null: the request costs nothing.
 */
export function worstCaseCost(
  endpoint: GatewayEndpoint,
  body: ParsedBody,
  price: TokenPrice,
): number | null {
  let output: number;
  switch (endpoint) {
    case 'messages.count_tokens':
      return null;
    case 'embeddings':
      output = 0;
      break;
    case 'images.generations': {
      const n = body.json.n;
      output = (typeof n === 'number' && Number.isInteger(n) && n > 0 ? n : 1) * TOKENS_PER_IMAGE;
      break;
    }
    default:
      output = completionBudget(body.json) || DEFAULT_OUTPUT_TOKENS;
  }
  const total =
    BigInt(body.raw.length) * BigInt(price.inputPrice) + BigInt(output) * BigInt(price.outputPrice);
  return Number((total + PER_MILLION - 1n) / PER_MILLION);
}

@Injectable()
export class SpendHolds {
  private readonly logger = new Logger('SpendHolds');
  private readonly outcomes: Counter<'outcome'>;
  private lastWarned = 0;

  constructor(
    private readonly ledger: SpendLedger,
    private readonly prices: PriceList,
    private readonly tokens: TokensRepository,
    registry: Registry,
  ) {
    this.outcomes = new Counter({
      name: 'edge_spend_holds_total',
      help: 'Quota holds taken before forwarding: held (the worst case), partial (what was left), refused, or unchecked (Redis unreachable: served unheld).',
      labelNames: ['outcome'],
      registers: [registry],
    });
  }

  /** Holds the request's worst case against its token's quota, or refuses it with 429. */
  async reserve(exchange: RoutedExchange): Promise<void> {
    const { token, body } = exchange;
    if (token.quota === null) return;
    const price = this.prices.priceOf(body.model);
    if (!price) return;
    const amount = worstCaseCost(exchange.endpoint, body, price);
    if (amount === null) return;
    const account = spendAccount('token', token.id);
    let result;
    try {
      result = await this.ledger.reserve(
        exchange.request.id,
        [{ account, limit: token.quota, amount }],
        (accounts) => this.settledSpend(accounts),
      );
    } catch (error) {
      this.outcomes.inc({ outcome: 'unchecked' });
      this.warn(`quota holds unchecked, serving unheld: ${(error as Error).message}`);
      return;
    }
    if (result.kind === 'refused') {
      this.outcomes.inc({ outcome: 'refused' });
      throw new GatewayError(
        'insufficient_quota',
        result.available > 0
          ? `This token's quota cannot cover this request: ${result.available} micro-dollars are left after the requests in flight. Retry when they finish, or ask an administrator to raise it.`
          : "This token's quota is used up, or held by its requests in flight. Retry when they finish, or ask an administrator to raise it.",
      );
    }
    this.outcomes.inc({ outcome: result.holds[0]! < amount ? 'partial' : 'held' });
    exchange.holds = [account];
  }

  /** Gives a failed request's hold back at once; metering would only drop it later. */
  release(exchange: Exchange): void {
    if (!exchange.holds) return;
    const accounts = exchange.holds;
    exchange.holds = undefined;
    this.ledger.release(exchange.request.id, accounts).catch((error: unknown) => {
      this.warn(`quota hold not released (it expires): ${(error as Error).message}`);
    });
  }

  /** The tokens' spend committed in Postgres, for accounts the ledger has no copy of. */
  private async settledSpend(accounts: string[]): Promise<number[]> {
    const ids = accounts.map((account) => Number(account.slice('token:'.length)));
    const used = await this.tokens.usedQuotas(ids);
    return ids.map((id) => used.get(id) ?? 0);
  }

  private warn(message: string): void {
    const now = Date.now();
    if (now - this.lastWarned < WARN_EVERY_MS) return;
    this.lastWarned = now;
    this.logger.warn(message);
  }
}
