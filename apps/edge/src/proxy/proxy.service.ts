import { type ServerResponse } from 'node:http';
import { setTimeout as nextTurn } from 'node:timers/promises';
import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { GatewayError } from '@switchyard/contracts';
import { TokenAuthenticator } from '../auth/token-authenticator.js';
import { Clock } from '../budgets/clock.js';
import { type ForwardedFrontApi } from '../front-apis/front-api.js';
import { ResponseOwners } from '../front-apis/responses/response-owners.js';
import { PriceList } from '../pricing/price-list.js';
import { SpendHolds } from '../quota/spend-holds.js';
import { type ClientRequest, type Exchange, type RoutedExchange } from './exchange.js';
import { ModelFallback } from './model-fallback.js';
import { Relay } from './relay.js';
import { UsageMeter } from './usage-meter.js';

// The hot path (docs/architecture.md), one step per collaborator: authenticate and read the
// body as the caller's front API says (front-apis/), hold the
// request's worst case against its token's quota and budgets (spend-holds.ts), then pick,
// forward and fail over before the first byte (failover.ts), to the model's fallbacks when
// none of its channels answered (model-fallback.ts), relay the answer as it comes
// (relay.ts), then hand the usage to metering and the outcome to the router, without making
// the client wait for either (usage-meter.ts).

/** Bodies above this many bytes are parsed in a turn of the event loop of their own. */
const LARGE_BODY_BYTES = 1_000_000;

@Injectable()
export class ProxyService implements OnApplicationShutdown {
  /** Requests not yet metered: shutdown waits for them before usage is flushed. */
  private inFlight = 0;
  private drained: (() => void) | null = null;

  constructor(
    private readonly authenticator: TokenAuthenticator,
    private readonly prices: PriceList,
    private readonly holds: SpendHolds,
    private readonly fallback: ModelFallback,
    private readonly relay: Relay,
    private readonly meter: UsageMeter,
    private readonly owners: ResponseOwners,
    private readonly clock: Clock,
  ) {}

  /** Answers `request`, or throws what the client is to be told (front-door.ts words it). */
  async handle(
    api: ForwardedFrontApi,
    request: ClientRequest,
    response: ServerResponse,
  ): Promise<void> {
    this.inFlight += 1;
    try {
      await this.exchange(api, request, response);
    } finally {
      this.inFlight -= 1;
      if (this.inFlight === 0) this.drained?.();
    }
  }

  /**
   * Runs after the HTTP server has closed, before the usage publisher flushes (it is a
   * deeper module): a stream's usage is recorded just after its connection closes.
   */
  async onApplicationShutdown(): Promise<void> {
    if (this.inFlight > 0) await new Promise<void>((resolve) => (this.drained = resolve));
  }

  private async exchange(
    api: ForwardedFrontApi,
    request: ClientRequest,
    response: ServerResponse,
  ): Promise<void> {
    // The clock budgets count periods by (a test may move it: budgets/clock.ts).
    const requestedAt = this.clock.now();
    const startedAt = performance.now();
    const token = await this.authenticator.authenticate(
      api.credential(request.headers, request),
      request.ip,
      requestedAt,
      request.raw.socket,
    );
    const exchange: Exchange = {
      request,
      response,
      api,
      token,
      requestedAt,
      startedAt,
      abort: new AbortController(),
      body: null,
      attempts: 0,
      candidate: null,
    };
    response.once('close', () => {
      if (!response.writableFinished) exchange.abort.abort();
    });
    try {
      // A body of megabytes is checked, decoded and parsed in turns of its own, each a
      // fraction of what one turn would take, so no request holds the event loop for long
      // (docs/reliability.md, "Counting tokens in bounded time").
      const large = request.body.length > LARGE_BODY_BYTES;
      if (large) await nextTurn();
      exchange.body = api.parse(request.body, request);
      if (large) await nextTurn();
      this.authenticator.authorizeModel(token, exchange.body.model);
      this.prices.authorize(token, exchange.body.model);
      const routed = exchange as RoutedExchange;
      // One hold for the request: its failover attempts share it, and its fallback models
      // too (a dearer one takes it again at its price).
      await this.holds.reserve(routed);
      const answered = await this.fallback.run(routed);
      // Which model answered: the one asked for, or a fallback of it (percent-encoded when
      // the name holds what a header cannot carry, a NUL or a non-ASCII letter).
      response.setHeader('x-switchyard-model', headerSafe(routed.body.model));
      // An answer the upstream stored (a Response): its follow-ups must find its channel.
      await this.owners.track(routed, answered);
      const delivery = await this.relay.deliver(routed, answered);
      this.meter.delivered(routed, answered.attempt, delivery);
    } catch (error) {
      // Nothing was delivered, so nothing is billed: the hold goes back now.
      this.holds.release(exchange);
      if (error instanceof GatewayError) {
        this.meter.record(exchange, {
          status: error.status,
          errorCode: error.code,
          usage: null,
          upstreamModel: null,
          completionText: '',
          firstByteMs: null,
          // The request log shows what the client was told (the filter words it the same).
          ...(token.requestLog
            ? {
                responseSample: JSON.stringify({
                  error: { code: error.code, message: error.message },
                }),
              }
            : {}),
        });
      }
      throw error;
    }
  }
}

/**
 * A model name as a header value: itself when printable ASCII, else its UTF-8 bytes
 * percent-encoded (a lone surrogate, which has none, as U+FFFD's).
 */
function headerSafe(model: string): string {
  if (/^[\x20-\x7e]*$/.test(model)) return model;
  let encoded = '';
  for (const byte of Buffer.from(model, 'utf8')) {
    encoded +=
      byte > 0x20 && byte < 0x7f && byte !== 0x25
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return encoded;
}
