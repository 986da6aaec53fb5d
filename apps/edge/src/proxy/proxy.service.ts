import { Readable } from 'node:stream';
import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import {
  GatewayError,
  isRetryableOutcome,
  outcomeOfStatus,
  type ChannelOutcome,
  type GatewayEndpoint,
  type OutcomeKind,
  type ReportedUsage,
  type UsageRecord,
} from '@switchyard/contracts';
import {
  AccountLimiter,
  hasLimits,
  type AccountLease,
  type AccountLimits,
  type Candidate,
  type RoutingTable,
} from '@switchyard/routing';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { TokenAuthenticator } from '../auth/token-authenticator.js';
import { type GatewayToken } from '../auth/token-directory.js';
import { KeyVault } from '../routing/key-vault.js';
import { RoutingState } from '../routing/routing-state.js';
import {
  UpstreamClient,
  UpstreamUnreachable,
  type UpstreamResponse,
} from '../upstream/upstream-client.js';
import { OutcomeReporter } from '../usage/outcome-reporter.js';
import { UsagePublisher } from '../usage/usage-publisher.js';
import { bodyFor, parseRequestBody, type ParsedBody } from './request-body.js';
import { StreamObserver, summarizeJson } from './stream-observer.js';

// The hot path (DESIGN §2): authenticate, pick a channel, forward, fail over before the
// first byte, relay the answer as it comes, then hand the usage to metering and the
// outcome to the router, without making the client wait for either.

const UPSTREAM_PATH: Record<GatewayEndpoint, string> = {
  'chat.completions': '/chat/completions',
  embeddings: '/embeddings',
  'images.generations': '/images/generations',
};

/** Candidates with limits are checked in Redis in batches of this size. */
const LIMIT_BATCH = 8;

const PASSED_HEADERS = ['content-type', 'openai-processing-ms', 'openai-version'];

export interface ProxyOptions {
  /** Upstream attempts per request, the first one included. */
  maxAttempts: number;
}

export const PROXY_OPTIONS = Symbol('PROXY_OPTIONS');

/** One client request as it goes through the edge. */
interface Exchange {
  request: FastifyRequest;
  reply: FastifyReply;
  endpoint: GatewayEndpoint;
  token: GatewayToken;
  requestedAt: number;
  startedAt: number;
  /** Aborted when the client goes away; cancels the upstream call. */
  abort: AbortController;
  /** Null until the body has been read and checked. */
  body: ParsedBody | null;
  attempts: number;
  candidate: Candidate | null;
}

/** An exchange whose body is known: what routing and forwarding work on. */
type RoutedExchange = Exchange & { body: ParsedBody };

interface Attempt {
  candidate: Candidate;
  lease: AccountLease;
}

type Pick = { kind: 'picked'; attempt: Attempt } | { kind: 'none' };

interface AttemptFailure {
  kind: OutcomeKind;
  message: string;
}

interface Delivery {
  status: number;
  errorCode: string | null;
  usage: ReportedUsage | null;
  upstreamModel: string | null;
  completionText: string;
  firstByteMs: number | null;
  /** Images an image generation returned (metering prices them when no usage came). */
  images?: number;
}

@Injectable()
export class ProxyService implements OnApplicationShutdown {
  private readonly logger = new Logger('Proxy');
  /** Requests not yet metered: shutdown waits for them before usage is flushed. */
  private inFlight = 0;
  private drained: (() => void) | null = null;

  constructor(
    @Inject(PROXY_OPTIONS) private readonly options: ProxyOptions,
    private readonly authenticator: TokenAuthenticator,
    private readonly routing: RoutingState,
    private readonly limiter: AccountLimiter,
    private readonly vault: KeyVault,
    private readonly upstream: UpstreamClient,
    private readonly outcomes: OutcomeReporter,
    private readonly usage: UsagePublisher,
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
      request.headers.authorization,
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
      await this.route(exchange as RoutedExchange);
    } catch (error) {
      if (error instanceof GatewayError) {
        this.recordUsage(exchange, {
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

  /** Tries candidates until one delivers; a failure before the first byte moves to the next. */
  private async route(exchange: RoutedExchange): Promise<void> {
    const excludedChannels = new Set<number>();
    const excludedKeys = new Set<number>();
    let failure: AttemptFailure | undefined;
    while (exchange.attempts < this.options.maxAttempts) {
      const pick = await this.pick(exchange, excludedChannels, excludedKeys);
      if (pick.kind === 'none') break;
      exchange.attempts += 1;
      exchange.candidate = pick.attempt.candidate;
      const result = await this.attempt(exchange, pick.attempt);
      if (result === 'delivered') return;
      failure = result;
      // An account's own refusal rules out that account; anything else, its channel.
      if (result.kind === 'banned' || result.kind === 'rate_limited')
        excludedKeys.add(pick.attempt.candidate.key.id);
      else excludedChannels.add(pick.attempt.candidate.channel.id);
    }
    throw this.exhausted(exchange, failure);
  }

  /** The next candidate with room, in policy order, skipping what this request already tried. */
  private async pick(
    exchange: RoutedExchange,
    excludedChannels: Set<number>,
    excludedKeys: Set<number>,
  ): Promise<Pick> {
    const table = this.routing.table;
    if (!table)
      throw new GatewayError(
        'service_unavailable',
        'The gateway has no routing state yet; retry in a moment.',
      );
    const { token, body } = exchange;
    // The token's own request rate counts once per request, on its first pick.
    const rateLimitedToken =
      exchange.attempts === 0 && token.rateLimit !== null
        ? { id: token.id, rateLimit: token.rateLimit }
        : undefined;
    const candidates = table.candidates({
      model: body.model,
      group: token.group,
      now: Date.now(),
      excludedChannels,
      excludedKeys,
    });
    let tokenChecked = rateLimitedToken === undefined;
    for (;;) {
      const batch: Candidate[] = [];
      for (const candidate of candidates) {
        batch.push(candidate);
        if (!hasLimits(limitsOf(candidate)) || batch.length >= LIMIT_BATCH) break;
      }
      if (batch.length === 0 && tokenChecked) return { kind: 'none' };
      const first = batch[0];
      if (first && tokenChecked && !hasLimits(limitsOf(first))) {
        return {
          kind: 'picked',
          attempt: { candidate: first, lease: AccountLimiter.unlimited(first.key.id) },
        };
      }
      const result = await this.limiter
        .acquire({
          requestId: exchange.request.id,
          estimatedTokens: body.estimatedTokens,
          token: tokenChecked ? undefined : rateLimitedToken,
          accounts: batch.map(limitsOf),
        })
        .catch((error: unknown) => {
          // Limits cannot be checked without Redis: serve rather than refuse (fail open).
          this.logger.warn({
            message: `account limits unchecked: ${(error as Error).message}`,
            requestId: exchange.request.id,
          });
          return null;
        });
      tokenChecked = true;
      if (result === null) {
        return first
          ? {
              kind: 'picked',
              attempt: { candidate: first, lease: AccountLimiter.unlimited(first.key.id) },
            }
          : { kind: 'none' };
      }
      if (result.kind === 'token_rate_limited') {
        throw new GatewayError(
          'rate_limit_exceeded',
          `Rate limit reached for this token (${token.rateLimit} requests per minute). Retry in ${Math.ceil(result.retryAfterMs / 1000)} s.`,
        );
      }
      if (result.kind === 'acquired')
        return {
          kind: 'picked',
          attempt: { candidate: batch[result.index]!, lease: result.lease },
        };
      if (batch.length === 0) return { kind: 'none' };
      // Every account of this batch is full: they stay out for the rest of this request.
      for (const candidate of batch) excludedKeys.add(candidate.key.id);
    }
  }

  /** One upstream attempt: delivered to the client, or a failure before the first byte. */
  private async attempt(
    exchange: RoutedExchange,
    attempt: Attempt,
  ): Promise<'delivered' | AttemptFailure> {
    const { candidate } = attempt;
    const attemptStarted = performance.now();
    let response: UpstreamResponse;
    try {
      response = await this.upstream.send({
        baseUrl: candidate.channel.baseUrl,
        path: UPSTREAM_PATH[exchange.endpoint],
        secret: this.vault.secretOf(candidate.key),
        body: bodyFor(exchange.body, candidate.upstreamModel),
        requestId: exchange.request.id,
        accept: exchange.body.stream ? 'text/event-stream' : 'application/json',
        signal: exchange.abort.signal,
      });
    } catch (error) {
      attempt.lease.release(0);
      if (!(error instanceof UpstreamUnreachable)) throw this.clientGone(exchange, error);
      this.report(candidate, error.kind, attemptStarted, undefined, error.message);
      return { kind: error.kind, message: error.message };
    }

    const kind = outcomeOfStatus(response.statusCode);
    if (isRetryableOutcome(kind)) {
      const detail = await readErrorDetail(response);
      attempt.lease.release(0);
      this.report(candidate, kind, attemptStarted, response, detail);
      return {
        kind,
        message: `upstream answered ${response.statusCode}${detail ? `: ${detail}` : ''}`,
      };
    }
    let answer: Answer;
    try {
      answer = await receive(response);
    } catch (error) {
      // Headers came but the answer did not: nothing reached the client yet, fail over.
      attempt.lease.release(0);
      if (exchange.abort.signal.aborted) throw this.clientGone(exchange, error);
      const message = `the upstream closed the connection before answering (${(error as Error).message})`;
      this.report(candidate, 'connect_error', attemptStarted, response, message);
      return { kind: 'connect_error', message };
    }
    this.report(candidate, kind, attemptStarted, response);
    await this.deliver(exchange, attempt, response, answer, attemptStarted);
    return 'delivered';
  }

  /** Relays the upstream's answer (success or the client's own error) and meters it. */
  private async deliver(
    exchange: RoutedExchange,
    attempt: Attempt,
    response: UpstreamResponse,
    answer: Answer,
    attemptStarted: number,
  ): Promise<void> {
    const { reply } = exchange;
    const firstByteMs = Math.round(performance.now() - exchange.startedAt);
    for (const name of PASSED_HEADERS) {
      const value = response.headers[name];
      if (typeof value === 'string') void reply.header(name, value);
    }
    if (answer.kind === 'whole') {
      const summary = response.statusCode < 400 ? summarizeJson(answer.body) : null;
      void reply.status(response.statusCode).send(answer.body);
      this.finish(exchange, attempt, {
        status: response.statusCode,
        errorCode: response.statusCode < 400 ? null : 'upstream_client_error',
        usage: summary?.usage ?? null,
        upstreamModel: summary?.model ?? attempt.candidate.upstreamModel,
        completionText: summary?.completionText ?? '',
        firstByteMs,
        ...(exchange.endpoint === 'images.generations' && summary ? { images: summary.items } : {}),
      });
      return;
    }

    void reply
      .status(response.statusCode)
      .header('cache-control', 'no-cache')
      .header('x-accel-buffering', 'no');
    const observer = new StreamObserver();
    let interrupted: string | null = null;
    const relay = Readable.from(
      (async function* () {
        try {
          if (answer.first) {
            observer.see(answer.first);
            yield answer.first;
          }
          for (let next = await answer.rest.next(); !next.done; next = await answer.rest.next()) {
            observer.see(next.value);
            yield next.value;
          }
        } catch (error) {
          if (exchange.abort.signal.aborted) return;
          interrupted = (error as Error).message;
          yield Buffer.from(interruptionEvent(interrupted));
        } finally {
          // The client left early: stop reading (and paying for) the upstream's answer.
          await answer.rest.return?.();
        }
      })(),
      { objectMode: false },
    );
    const done = new Promise<void>((resolve) => {
      reply.raw.once('close', () => resolve());
    });
    void reply.send(relay);
    await done;
    const summary = observer.summary();
    const clientGone = exchange.abort.signal.aborted;
    this.report(
      attempt.candidate,
      interrupted ? 'server_error' : 'ok',
      attemptStarted,
      response,
      interrupted ?? undefined,
      true,
    );
    this.finish(exchange, attempt, {
      status: response.statusCode,
      errorCode: interrupted ? 'stream_interrupted' : clientGone ? 'client_closed' : null,
      usage: summary.usage,
      upstreamModel: summary.model ?? attempt.candidate.upstreamModel,
      completionText: summary.completionText,
      firstByteMs,
    });
  }

  private finish(exchange: RoutedExchange, attempt: Attempt, delivery: Delivery): void {
    const used = delivery.usage
      ? delivery.usage.promptTokens + delivery.usage.completionTokens
      : exchange.body.estimatedTokens;
    attempt.lease.release(used);
    this.recordUsage(exchange, delivery);
  }

  private recordUsage(exchange: Exchange, delivery: Delivery): void {
    const { body, candidate, request } = exchange;
    const record: UsageRecord = {
      requestId: request.id,
      tokenId: exchange.token.id,
      channelId: candidate?.channel.id ?? null,
      keyId: candidate?.key.id ?? null,
      endpoint: exchange.endpoint,
      model: (body?.model ?? '').slice(0, 128),
      upstreamModel: delivery.upstreamModel?.slice(0, 128) ?? null,
      stream: body?.stream ?? false,
      status: delivery.status,
      errorCode: delivery.errorCode,
      usage: delivery.usage,
      latencyMs: Math.round(performance.now() - exchange.startedAt),
      firstByteMs: delivery.firstByteMs,
      attempts: exchange.attempts,
      clientIp: request.ip,
      requestedAt: exchange.requestedAt,
    };
    // Without reported usage, metering counts what was sent and received with a tokenizer.
    if (!delivery.usage && delivery.firstByteMs !== null && body && delivery.status < 400) {
      record.promptText = body.promptText();
      record.completionText = delivery.completionText;
      if (delivery.images !== undefined) record.imageCount = delivery.images;
    }
    this.usage.record(record);
  }

  private report(
    candidate: Candidate,
    kind: OutcomeKind,
    startedAt: number,
    response?: UpstreamResponse,
    detail?: string,
    afterStream = false,
  ): void {
    // A finished stream reports again only when it broke: its start already counted as ok.
    if (afterStream && kind === 'ok') return;
    const retryAfter = response?.headers['retry-after'];
    const outcome: ChannelOutcome = {
      channelId: candidate.channel.id,
      keyId: candidate.key.id,
      kind,
      latencyMs: Math.round(performance.now() - startedAt),
      at: Date.now(),
      ...(response ? { httpStatus: response.statusCode } : {}),
      ...(typeof retryAfter === 'string' && /^\d+$/.test(retryAfter)
        ? { retryAfterMs: Number(retryAfter) * 1000 }
        : {}),
      ...(detail ? { detail: detail.slice(0, 200) } : {}),
    };
    this.outcomes.add(outcome);
  }

  private clientGone(exchange: Exchange, error: unknown): Error {
    return exchange.abort.signal.aborted
      ? new GatewayError(
          'upstream_error',
          'The client closed the connection before the upstream answered.',
        )
      : (error as Error);
  }

  /** No attempt delivered: say why, in the terms of seed §7. */
  private exhausted(exchange: RoutedExchange, failure: AttemptFailure | undefined): GatewayError {
    const { body, token, attempts } = exchange;
    const table = this.routing.table as RoutingTable;
    if (!failure) {
      // A model no channel serves is the client's mistake; one whose channels are all busy
      // or resting is ours, for now.
      if (!table.serves(body.model, token.group)) {
        return new GatewayError(
          'model_not_found',
          `The model \`${body.model}\` does not exist or is not served in group \`${token.group}\`.`,
          'model',
        );
      }
      return new GatewayError(
        'no_available_channel',
        `No available channel for model \`${body.model}\` in group \`${token.group}\`: every channel serving it is saturated, cooling down or unhealthy; retry later.`,
        'model',
      );
    }
    const tried = `${attempts} attempt${attempts === 1 ? '' : 's'}`;
    if (failure.kind === 'timeout') {
      return new GatewayError(
        'upstream_timeout',
        `The upstream did not answer in time (${tried}; last: ${failure.message}).`,
      );
    }
    if (failure.kind === 'rate_limited' || failure.kind === 'banned') {
      return new GatewayError(
        'no_available_channel',
        `No available channel for model \`${body.model}\` in group \`${token.group}\`: the upstream accounts are saturated or refused (${tried}; last: ${failure.message}); retry later.`,
        'model',
      );
    }
    return new GatewayError(
      'upstream_error',
      `The upstream request failed (${tried}; last: ${failure.message}).`,
    );
  }
}

function limitsOf(candidate: Candidate): AccountLimits {
  return {
    keyId: candidate.key.id,
    rpm: candidate.key.rpm,
    tpm: candidate.key.tpm,
    concurrency: candidate.key.concurrency,
  };
}

/**
 * An upstream answer held until its first bytes are in: a JSON answer whole (it is small,
 * and its usage is read from it), a stream up to its first chunk.
 */
type Answer =
  | { kind: 'whole'; body: Buffer }
  | { kind: 'stream'; first: Buffer | null; rest: AsyncIterator<Buffer> };

async function receive(response: UpstreamResponse): Promise<Answer> {
  if (!String(response.headers['content-type'] ?? '').includes('text/event-stream')) {
    return { kind: 'whole', body: Buffer.from(await response.body.arrayBuffer()) };
  }
  const rest = response.body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const first = await rest.next();
  return { kind: 'stream', first: first.done ? null : first.value, rest };
}

/** The upstream's own words for a refused attempt, for logs and the router (never for billing). */
async function readErrorDetail(response: UpstreamResponse): Promise<string> {
  try {
    const text = (await response.body.text()).slice(0, 2_000);
    const parsed = JSON.parse(text) as { error?: { message?: string; code?: string } };
    return parsed.error?.message ?? parsed.error?.code ?? text.slice(0, 200);
  } catch {
    return '';
  }
}

/** The last event of a stream cut mid-way: an error the OpenAI SDKs raise to the caller. */
function interruptionEvent(reason: string): string {
  const error = {
    error: {
      message: `The upstream stream was interrupted: ${reason}`,
      type: 'upstream_error',
      param: null,
      code: 'stream_interrupted',
    },
  };
  return `data: ${JSON.stringify(error)}\n\n`;
}
