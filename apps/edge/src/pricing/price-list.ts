import { Inject, Injectable } from '@nestjs/common';
import { type UnpricedModelPolicy } from '@switchyard/config';
import { GatewayError } from '@switchyard/contracts';
import { type PriceTable, type ResolvedPrice, type TokenPrice } from '@switchyard/domain';
import { PriceCache } from '@switchyard/gateway-store/prices';
import { type GatewayToken } from '../auth/token-directory.js';
import { RoutingState } from '../routing/routing-state.js';

// The price table as the edge needs it: which models have a price, for the `refuse` policy
// of UNPRICED_MODELS (a token with a quota may not spend it on a model metering would have
// to bill at its default price, docs/architecture.md, "Unpriced models"), and what a model
// costs, for the worst case a request holds against its token's quota before it is
// forwarded (quota/spend-holds.ts). Both apply metering's rule (`PriceTable.priceFor`,
// docs/architecture.md, "Prices") to the upstream names the request's channels map it to,
// since which channel serves it is not known yet.

export const UNPRICED_MODEL_POLICY = Symbol('UNPRICED_MODEL_POLICY');

@Injectable()
export class PriceList {
  constructor(
    @Inject(UNPRICED_MODEL_POLICY) private readonly policy: UnpricedModelPolicy,
    private readonly prices: PriceCache,
    private readonly routing: RoutingState,
  ) {}

  /** Refuses an unpriced model to a token with a quota, when the operator chose so. */
  authorize(token: GatewayToken, model: string): void {
    if (this.policy !== 'refuse' || !token.hasQuota) return;
    // Null until read: the edge serves (fails open) rather than refuse on prices it does not know.
    const table = this.prices.table;
    if (table === null) return;
    if (this.possiblePrices(table, model, token.group).every((price) => price !== undefined)) {
      return;
    }
    throw new GatewayError(
      'model_not_priced',
      `The model \`${model}\` has no price on this gateway, and tokens with a quota may only use priced models. Ask an administrator to set its price.`,
      'model',
    );
  }

  /**
   * The most metering may bill the model at for a token of the group: its own price, else
   * the dearest of the upstream names its channels map it to. Undefined when none has a
   * price, or no price is known yet.
   */
  priceOf(model: string, group: string): TokenPrice | undefined {
    const table = this.prices.table;
    if (table === null) return undefined;
    let worst: TokenPrice | undefined;
    for (const price of this.possiblePrices(table, model, group)) {
      if (!price) continue;
      worst = {
        inputPrice: Math.max(worst?.inputPrice ?? 0, price.inputPrice),
        outputPrice: Math.max(worst?.outputPrice ?? 0, price.outputPrice),
      };
    }
    return worst;
  }

  /**
   * What metering may resolve the request to, one price per channel mapping; undefined
   * where it would bill DEFAULT_MODEL_PRICE. A model with a price of its own has one.
   */
  private possiblePrices(
    table: PriceTable,
    model: string,
    group: string,
  ): (ResolvedPrice | undefined)[] {
    const own = table.find(model);
    if (own) return [own];
    const upstream = this.routing.table?.upstreamModels(model, group) ?? [];
    if (upstream.length === 0) return [undefined];
    return upstream.map((name) => table.priceFor(model, name));
  }
}
