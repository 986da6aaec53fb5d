import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { GatewayError, type GatewayEndpoint } from '@switchyard/contracts';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { TokenAuthenticator } from '../auth/token-authenticator.js';
import { PriceList } from '../pricing/price-list.js';
import { SpendHolds } from '../quota/spend-holds.js';
import { type Exchange, type RoutedExchange } from './exchange.js';
import { Failover } from './failover.js';
import { Relay } from './relay.js';
import { parseRequestBody } from './request-body.js';
import { UsageMeter } from './usage-meter.js';

// The hot path (docs/architecture.md), one step per collaborator: authenticate, hold the
// request's worst case against its token's quota (spend-holds.ts), then pick,
// forward and fail over before the first byte (failover.ts), relay the answer as it comes
// (relay.ts), then hand the usage to metering and the outcome to the router, without making
// the client wait for either (usage-meter.ts).

@Injectable()
export class ProxyService implements OnApplicationShutdown {
  /** Requests not yet metered: shutdown waits for them before usage is flushed. */
  private inFlight = 0;
  private drained: (() => void) | null = null;

  constructor(
    private readonly authenticator: TokenAuthenticator,
    private readonly prices: PriceList,
    private readonly holds: SpendHolds,
    private readonly failover: Failover,
    private readonly relay: Relay,
    private readonly meter: UsageMeter,
  ) {}

  async handle(
    endpoint: GatewayEndpoint,
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<void> {
    this.inFlight += 1;
    try {
      await this.exchange(endpoint, request, reply);
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
    endpoint: GatewayEndpoint,
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<void> {
    const requestedAt = Date.now();
    const startedAt = performance.now();
    const token = await this.authenticator.authenticate(
      endpoint === 'messages' || endpoint === 'messages.count_tokens'
        ? anthropicCredential(request)
        : request.headers.authorization,
      request.ip,
      requestedAt,
    );
    const exchange: Exchange = {
      request,
      reply,
      endpoint,
      token,
      requestedAt,
      startedAt,
      abort: new AbortController(),
      body: null,
      attempts: 0,
      candidate: null,
    };
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) exchange.abort.abort();
    });
    try {
      exchange.body = parseRequestBody(endpoint, request.body);
      this.authenticator.authorizeModel(token, exchange.body.model);
      this.prices.authorize(token, exchange.body.model);
      const routed = exchange as RoutedExchange;
      // One hold for the request: its failover attempts share it.
      await this.holds.reserve(routed);
      const answered = await this.failover.run(routed);
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
        });
      }
      throw error;
    }
  }
}

/** Anthropic's SDKs send the key as `x-api-key`; `Authorization: Bearer` works as well. */
function anthropicCredential(request: FastifyRequest): string | undefined {
  const key = request.headers['x-api-key'];
  return typeof key === 'string' && key !== '' ? `Bearer ${key}` : request.headers.authorization;
}
