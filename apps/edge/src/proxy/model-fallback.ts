import { Injectable } from '@nestjs/common';
import { GatewayError, type GatewayErrorCode } from '@switchyard/contracts';
import { TokenAuthenticator } from '../auth/token-authenticator.js';
import { FallbackTable } from '../fallbacks/fallback-table.js';
import { type FallbackLists } from '../fallbacks/model-fallbacks.repository.js';
import { PriceList } from '../pricing/price-list.js';
import { SpendHolds } from '../quota/spend-holds.js';
import { type RoutedExchange } from './exchange.js';
import { Failover, type Answered } from './failover.js';

// Fallbacks across models (docs/routing.md, "Fallbacks across models"): when every channel
// of the requested model failed before the first byte, or none could take the request, the
// next model of the list the operator set for it is asked, its body naming that model (the
// channel's conversion then happens as for any request); an upstream's context-window or
// content-policy refusal moves to that error's own list instead, when the model has one.
// Each model is asked once, in list order: the lists bound the request. A model the token
// may not use is passed over. Nothing here runs once a byte reached the client: the failover
// step answers only at the first byte, and the relay that follows retries nothing.

/** The failures of a whole model that a fallback may answer instead. */
const FALLS_BACK = new Set<GatewayErrorCode>([
  'model_not_found',
  'no_available_channel',
  'upstream_error',
  'upstream_timeout',
]);

type RefusalList = 'contextWindow' | 'contentPolicy';

/** How providers word a request beyond the model's context window (OpenAI, Anthropic, Gemini, Azure). */
const CONTEXT_WINDOW =
  /context_length_exceeded|maximum context length|context window|prompt is too long|input is too long|exceeds the maximum number of tokens/i;
/** How they word a refusal under their content policy. */
const CONTENT_POLICY =
  /content_policy_violation|content_filter|content management policy|responsibleaipolicyviolation|safety system/i;

/** The error list an upstream's refusal calls for, if it is one of those two. */
export function refusalList(answered: Answered): RefusalList | null {
  const { response, answer } = answered;
  if (!response || response.statusCode < 400 || answer.kind !== 'whole') return null;
  const text = answer.body.toString('utf8');
  if (CONTEXT_WINDOW.test(text)) return 'contextWindow';
  if (CONTENT_POLICY.test(text)) return 'contentPolicy';
  return null;
}

@Injectable()
export class ModelFallback {
  constructor(
    private readonly table: FallbackTable,
    private readonly failover: Failover,
    private readonly holds: SpendHolds,
    private readonly authenticator: TokenAuthenticator,
    private readonly prices: PriceList,
  ) {}

  /**
   * The requested model's answer, or a fallback's; the exchange's body is then the served
   * model's and `requestedModel` the one asked for. Throws the last model's error, worded
   * for the chain, when none answered.
   */
  async run(exchange: RoutedExchange): Promise<Answered> {
    const requested = exchange.body.model;
    const lists = this.table.listsOf(requested);
    if (!lists || !exchange.api.renamed) return this.failover.run(exchange);
    const original = exchange.body;
    const tried = [requested];
    let active: keyof FallbackLists = 'fallbacks';
    for (;;) {
      let answered: Answered;
      try {
        answered = await this.failover.run(exchange);
      } catch (error) {
        if (!(error instanceof GatewayError) || !FALLS_BACK.has(error.code)) throw error;
        if (exchange.abort.signal.aborted) throw error;
        if (await this.next(exchange, lists[active], tried)) continue;
        // The usage row names the model asked for: none served it.
        exchange.body = original;
        exchange.requestedModel = undefined;
        throw tried.length > 1 ? chainError(error, tried) : error;
      }
      const refusal = refusalList(answered);
      if (!refusal || lists[refusal].length === 0) return answered;
      active = refusal;
      // The refusal is passed over: nothing reached the client, and the account's room goes back.
      const { attempt } = answered;
      const moved = await this.next(exchange, lists[refusal], tried).catch((error: unknown) => {
        attempt.lease.release(0);
        throw error;
      });
      if (!moved) return answered;
      attempt.lease.release(0);
    }
  }

  /**
   * Moves the exchange to the list's first model not tried yet that the token may use, its
   * spend hold covering that model's price; false when none is left.
   */
  private async next(exchange: RoutedExchange, list: string[], tried: string[]): Promise<boolean> {
    const { token } = exchange;
    for (const model of list) {
      if (tried.includes(model)) continue;
      tried.push(model);
      try {
        this.authenticator.authorizeModel(token, model);
        this.prices.authorize(token, model);
      } catch (error) {
        if (error instanceof GatewayError) continue;
        throw error;
      }
      exchange.requestedModel ??= exchange.body.model;
      exchange.body = exchange.api.renamed!(exchange.body, model);
      await this.holds.cover(exchange);
      return true;
    }
    return false;
  }
}

/** The last model's failure, saying which models were tried. */
function chainError(last: GatewayError, tried: string[]): GatewayError {
  const chain = tried.map((model) => `\`${model}\``).join(' → ');
  return new GatewayError(
    last.code,
    `No model of the fallback chain ${chain} could answer; the last said: ${last.message}`,
    last.param,
    last.options,
  );
}
