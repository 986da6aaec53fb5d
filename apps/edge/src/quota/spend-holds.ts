import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  applyMultiplier,
  parseBalanceAccount,
  parseBudgetAccount,
  type TokenPrice,
} from '@switchyard/domain';
import { Registry, TalliedCounter } from '@switchyard/observability';
import { SpendBlocks, SpendLedger, type Charge } from '@switchyard/spend';
import { TokensRepository } from '../auth/tokens.repository.js';
import { BUDGET_TIME_ZONE } from '../budgets/budgets.module.js';
import { Clock } from '../budgets/clock.js';
import { PriceList } from '../pricing/price-list.js';
import { type Exchange, type RoutedExchange } from '../proxy/exchange.js';
import { type ParsedBody } from '../front-apis/front-api.js';
import { accountsPaying, refusal } from './accounts-paying.js';

// The quota step of the hot path (docs/architecture.md, "Spend holds"): before a request
// is forwarded, its worst-case cost is held against every account that pays for it in the
// shared spend ledger (its token's quota, the budgets covering it, its team's balance:
// docs/budgets.md), all or none, so requests in flight together cannot spend any of them
// many times over. Metering settles the holds when it commits the request's usage; a
// request that fails here gives its holds back at once.
//
// Nothing is asked of Redis for a token nothing limits, nor for a model without a price
// (metering bills it at its default price, as before holds), nor for a request carved from
// this edge's block of holds for the same accounts (docs/architecture.md, "Spend blocks"). While Redis cannot be asked,
// requests are served unheld (fail open, docs/reliability.md): the token is still refused
// once metering finds its quota spent.

const PER_MILLION = 1_000_000n;
/** How often an unreachable ledger is logged: every request would flood the log. */
const WARN_EVERY_MS = 10_000;

/**
 * The most the request can cost, in micro-dollars: every byte of the body taken as a
 * prompt token (a token is at least a byte of text), or the worst-case input its front API
 * names (search units, characters, seconds), plus the most output its front API bills it
 * for (its output limit, or `DEFAULT_OUTPUT_TOKENS`), at the model's price. Null: the
 * request costs nothing.
 */
export function worstCaseCost(body: ParsedBody, price: TokenPrice): number | null {
  const output = body.worstCaseOutputTokens;
  if (output === null) return null;
  const input = body.worstCaseInputTokens ?? body.raw.length;
  const total =
    BigInt(input) * BigInt(price.inputPrice) + BigInt(output) * BigInt(price.outputPrice);
  return Number((total + PER_MILLION - 1n) / PER_MILLION);
}

@Injectable()
export class SpendHolds {
  private readonly logger = new Logger('SpendHolds');
  private readonly outcomes: TalliedCounter<'outcome'>;
  private readonly paths: TalliedCounter<'path'>;
  private lastWarned = 0;

  constructor(
    private readonly ledger: SpendLedger,
    private readonly blocks: SpendBlocks,
    private readonly prices: PriceList,
    private readonly tokens: TokensRepository,
    private readonly clock: Clock,
    @Inject(BUDGET_TIME_ZONE) private readonly zone: string,
    registry: Registry,
  ) {
    this.outcomes = new TalliedCounter({
      name: 'edge_spend_holds_total',
      help: 'Holds taken before forwarding (quota, budgets, balance): held (the worst case), partial (what was left), refused, or unchecked (Redis unreachable: served unheld).',
      labelNames: ['outcome'],
      registers: [registry],
    });
    this.paths = new TalliedCounter({
      name: 'edge_spend_reservations_total',
      help: 'Holds taken, by whether Redis was asked (redis) or they were carved from a block of holds this edge took ahead of demand (local).',
      labelNames: ['path'],
      registers: [registry],
    });
  }

  /** Holds the request's worst case on every account paying for it, or refuses it with 429. */
  async reserve(exchange: RoutedExchange): Promise<void> {
    const { token, body } = exchange;
    const paying = accountsPaying(token, new Date(exchange.requestedAt), this.zone);
    if (paying.length === 0) return;
    const price = this.prices.priceOf(body.model, token.group);
    if (!price) return;
    const base = worstCaseCost(body, price);
    if (base === null) return;
    // The price group multiplies what metering will bill, so it multiplies the worst case.
    const amount = Number(applyMultiplier(BigInt(base), token.priceMultiplier));
    exchange.heldWorstCase = base;
    const charges: Charge[] = paying.map(({ account, limit }) => ({ account, limit, amount }));
    let result;
    try {
      result = await this.blocks.reserve(
        exchange.request.id,
        charges,
        (accounts) => this.settledSpend(accounts),
        this.clock.now(),
      );
    } catch (error) {
      this.outcomes.tally({ outcome: 'unchecked' }).inc();
      this.warn(`spend holds unchecked, serving unheld: ${(error as Error).message}`);
      return;
    }
    if (result.kind === 'refused') {
      this.outcomes.tally({ outcome: 'refused' }).inc();
      throw refusal(paying[result.index]!, result.available, this.clock.now());
    }
    this.outcomes
      .tally({ outcome: result.holds.some((held) => held < amount) ? 'partial' : 'held' })
      .inc();
    this.paths.tally({ path: result.carved ? 'local' : 'redis' }).inc();
    exchange.holds = charges.map((charge) => charge.account);
    if (result.carved) exchange.carved = result.carved;
  }

  /**
   * The request moved to a fallback model (proxy/model-fallback.ts): a hold smaller than
   * that model's worst case is given back and taken again at its price, under the same
   * request id, so the request holds once, never twice, and what it may cost stays covered
   * (a refusal is then the request's answer, as it would have been for that model).
   */
  async cover(exchange: RoutedExchange): Promise<void> {
    const { token, body } = exchange;
    const price = this.prices.priceOf(body.model, token.group);
    const base = price ? worstCaseCost(body, price) : null;
    if (base === null || (exchange.heldWorstCase ?? 0) >= base) return;
    exchange.heldWorstCase = undefined;
    await this.giveBack(exchange);
    await this.reserve(exchange);
  }

  /** Gives a failed request's holds back at once; metering would only drop them later. */
  release(exchange: Exchange): void {
    void this.giveBack(exchange);
  }

  private async giveBack(exchange: Exchange): Promise<void> {
    const { holds: accounts, carved } = exchange;
    if (!accounts) return;
    exchange.holds = undefined;
    exchange.carved = undefined;
    const requestId = exchange.request.id;
    await (
      carved
        ? this.blocks.release(requestId, accounts, carved)
        : this.ledger.release(requestId, accounts)
    ).catch((error: unknown) => {
      this.warn(`spend hold not released (it expires): ${(error as Error).message}`);
    });
  }

  /**
   * The spend committed in Postgres, for accounts the ledger has no copy of: a token's used
   * quota, a budget period's `BudgetSpend`, a balance's debited total.
   */
  private async settledSpend(accounts: string[]): Promise<number[]> {
    const tokenIds: number[] = [];
    const periods: { subject: string; periodStart: Date }[] = [];
    const teamIds: number[] = [];
    for (const account of accounts) {
      const period = parseBudgetAccount(account);
      const team = parseBalanceAccount(account);
      if (period) periods.push(period);
      else if (team !== null) teamIds.push(team);
      else tokenIds.push(Number(account.slice('token:'.length)));
    }
    const [used, spent, debited] = await Promise.all([
      tokenIds.length > 0 ? this.tokens.usedQuotas(tokenIds) : new Map<number, number>(),
      periods.length > 0 ? this.tokens.budgetSpent(periods) : new Map<string, number>(),
      teamIds.length > 0 ? this.tokens.debited(teamIds) : new Map<number, number>(),
    ]);
    return accounts.map((account) => {
      const period = parseBudgetAccount(account);
      if (period) return spent.get(account.slice('budget:'.length)) ?? 0;
      const team = parseBalanceAccount(account);
      if (team !== null) return debited.get(team) ?? 0;
      return used.get(Number(account.slice('token:'.length))) ?? 0;
    });
  }

  private warn(message: string): void {
    const now = Date.now();
    if (now - this.lastWarned < WARN_EVERY_MS) return;
    this.lastWarned = now;
    this.logger.warn(message);
  }
}
