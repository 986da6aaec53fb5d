import { Inject, Injectable } from '@nestjs/common';
import { GatewayError, isRetryableOutcome, outcomeOfStatus } from '@switchyard/contracts';
import { redactSecrets } from '@switchyard/observability';
import { type RoutingTable } from '@switchyard/routing';
import { type ChannelCall, type EdgeAnswer } from '../front-apis/front-api.js';
import { RoutingState } from '../routing/routing-state.js';
import { UpstreamUnreachable, type UpstreamResponse } from '../upstream/upstream-client.js';
import { OutcomeReporter } from '../usage/outcome-reporter.js';
import { ChannelBreaker } from './channel-breaker.js';
import { ChannelForwarder } from './channel-forwarder.js';
import { ChannelPicker, type Exclusions, type PickRequest } from './channel-picker.js';
import { type Attempt, type AttemptFailure, type RoutedExchange } from './exchange.js';
import { summarizeJson } from './json-summary.js';
import {
  channelOutcome,
  errorDetailOf,
  readErrorBody,
  readErrorDetail,
  receive,
  type Answer,
} from './upstream-answer.js';

// The fail-over step: pick, forward, and on a failure before the first byte, the next
// candidate. Once bytes are in, the attempt is the answer (see relay.ts). What a channel is
// sent and how its answer comes back is the front API's (front-apis/, `call`), asked once
// an attempt.
//
// Failures that are certain within milliseconds (the account refused: 401/403/429; nothing
// listens) cost no budget: the request goes on to the next candidate until none is left.
// Slow failures (5xx, timeouts, cut connections) are bounded twice: by a number of attempts
// and by a time budget that also caps each attempt's wait for the first byte.
//
// A channel that cannot serve the request at all (its conversion refuses a field: a
// /v1/responses request that continues a stored response, on a channel not of OpenAI) is
// no failure of the channel: it is passed over, and its refusal is the answer only when no
// other channel could take the request.

export interface FailoverOptions {
  /** Slow failures a request may go through before it gives up. */
  maxAttempts: number;
  /** No new attempt starts this long after the request arrived; waits are cut to fit. */
  timeBudgetMs: number;
  /** Wait for response headers of a channel that sets none of its own. */
  firstByteMs: number;
}

export const FAILOVER_OPTIONS = Symbol('FAILOVER_OPTIONS');

/**
 * The `Retry-After` of a 503 for busy or resting channels: long enough for an account's
 * in-flight slot or a cool-down step to pass, short enough that a client's retry is not
 * what keeps it waiting.
 */
const BUSY_RETRY_AFTER_MS = 1_000;

/** The attempt that got an answer, held at its first bytes. */
export interface Answered {
  attempt: Attempt;
  /** Null when the edge answered for the channel (a token count it can make itself). */
  response: UpstreamResponse | null;
  answer: Answer;
  attemptStarted: number;
}

@Injectable()
export class Failover {
  constructor(
    @Inject(FAILOVER_OPTIONS) private readonly options: FailoverOptions,
    private readonly routing: RoutingState,
    private readonly picker: ChannelPicker,
    private readonly forwarder: ChannelForwarder,
    private readonly breaker: ChannelBreaker,
    private readonly outcomes: OutcomeReporter,
  ) {}

  /** Tries candidates until one answers; throws the client's error when none did. */
  async run(exchange: RoutedExchange): Promise<Answered> {
    const table = this.routing.table;
    if (!table)
      throw new GatewayError(
        'service_unavailable',
        'The gateway has no routing state yet; retry in a moment.',
        null,
        { retryAfterMs: BUSY_RETRY_AFTER_MS },
      );
    const { token, body } = exchange;
    const request: PickRequest = {
      requestId: exchange.request.id,
      model: body.model,
      group: token.group,
      estimatedTokens: body.estimatedTokens,
      // Counted once a request, however many models its fallbacks ask (model-fallback.ts).
      tokenRate:
        token.rateLimit !== null && !exchange.rateCounted
          ? { id: token.id, rateLimit: token.rateLimit }
          : undefined,
    };
    const excluded: Exclusions = { channels: this.breaker.openChannels(), keys: new Set() };
    const deadline = exchange.startedAt + this.options.timeBudgetMs;
    let slowFailures = 0;
    let failure: AttemptFailure | undefined;
    let refusal: GatewayError | undefined;
    while (slowFailures < this.options.maxAttempts) {
      const remainingMs = Math.floor(deadline - performance.now());
      if (remainingMs <= 0) break;
      const attempt = await this.picker.pick(table, request, excluded);
      // The token's own request rate counts once per request.
      request.tokenRate = undefined;
      exchange.rateCounted = true;
      if (!attempt) break;
      exchange.attempts += 1;
      exchange.candidate = attempt.candidate;
      const ownWait = attempt.candidate.channel.firstByteTimeoutMs ?? this.options.firstByteMs;
      const result = await this.attempt(exchange, attempt, Math.min(ownWait, remainingMs));
      if (result instanceof GatewayError) {
        exchange.attempts -= 1;
        refusal ??= result;
        excluded.channels.add(attempt.candidate.channel.id);
        continue;
      }
      if (!('kind' in result)) return result;
      failure = result;
      if (!result.fast) slowFailures += 1;
      // An account's own refusal rules out that account; anything else, its channel.
      if (result.kind === 'banned' || result.kind === 'rate_limited')
        excluded.keys.add(attempt.candidate.key.id);
      else excluded.channels.add(attempt.candidate.channel.id);
      if (result.kind === 'timeout') this.breaker.trip(attempt.candidate.channel.id);
    }
    if (refusal && !failure) throw refusal;
    throw exhaustedError(exchange, table, failure);
  }

  /** One upstream attempt: an answer at its first bytes, or a failure before them. */
  private async attempt(
    exchange: RoutedExchange,
    attempt: Attempt,
    firstByteMs: number,
  ): Promise<Answered | SettledFailure | GatewayError> {
    const { candidate } = attempt;
    const attemptStarted = performance.now();
    // What an upstream says goes to the client, the logs and the router's audit: never
    // with its key in it (docs/architecture.md, "Secrets in error text").
    const secret = this.forwarder.secretOf(candidate);
    const redact = (text: string): string => redactSecrets(text, [secret]);
    let call: ChannelCall | EdgeAnswer;
    try {
      call = exchange.api.call(exchange.body, {
        channel: candidate.channel,
        upstreamModel: candidate.upstreamModel,
        secret,
        settings: candidate.channel.settings ?? {},
        clientHeaders: exchange.request.headers,
      });
    } catch (error) {
      // The channel cannot take the request (its conversion refused it): it is passed over.
      attempt.lease.release(0);
      if (error instanceof GatewayError && !exchange.abort.signal.aborted) return error;
      throw clientGone(exchange.abort, error);
    }
    if ('local' in call) return this.answeredHere(call, attempt, attemptStarted);
    let response: UpstreamResponse;
    try {
      response = await this.forwarder.forward(candidate, {
        upstream: call.request,
        requestId: exchange.request.id,
        stream: exchange.body.stream,
        signal: exchange.abort.signal,
        firstByteMs,
      });
    } catch (error) {
      attempt.lease.release(0);
      if (error instanceof GatewayError && !exchange.abort.signal.aborted) return error;
      if (!(error instanceof UpstreamUnreachable)) throw clientGone(exchange.abort, error);
      const message = redact(error.message);
      this.outcomes.add(channelOutcome(candidate, error.kind, attemptStarted, undefined, message));
      return { kind: error.kind, message, fast: error.fast };
    }

    const { healthStatus } = call;
    // The answer's first chunk must come within what is left of the first-byte wait.
    const firstChunkMs = (): number =>
      Math.max(1, Math.floor(firstByteMs - (performance.now() - attemptStarted)));
    // A converted provider's error is read before its health is judged: some say in the
    // body what their status does not (docs/providers.md).
    const errorBody =
      healthStatus && response.statusCode >= 400
        ? await readErrorBody(response, firstChunkMs())
        : undefined;
    const kind = outcomeOfStatus(
      healthStatus
        ? healthStatus(response.statusCode, errorBody ?? Buffer.alloc(0))
        : response.statusCode,
    );
    if (isRetryableOutcome(kind)) {
      const detail = errorBody
        ? errorDetailOf(errorBody.toString('utf8'), secret)
        : await readErrorDetail(response, secret);
      attempt.lease.release(0);
      this.outcomes.add(channelOutcome(candidate, kind, attemptStarted, response, detail));
      return {
        kind,
        message: `upstream answered ${response.statusCode}${detail ? `: ${detail}` : ''}`,
        fast: kind === 'banned' || kind === 'rate_limited',
      };
    }
    let answer: Answer;
    try {
      answer = errorBody
        ? { kind: 'whole', body: errorBody }
        : await receive(response, firstChunkMs(), exchange.api.answersAudio === true);
      answer = call.answer(response.statusCode, answer);
    } catch (error) {
      // Headers came but the answer did not: nothing reached the client yet, fail over.
      attempt.lease.release(0);
      if (exchange.abort.signal.aborted) throw clientGone(exchange.abort, error);
      if (error instanceof UpstreamUnreachable) {
        const message = redact(error.message);
        this.outcomes.add(channelOutcome(candidate, error.kind, attemptStarted, response, message));
        return { kind: error.kind, message, fast: false };
      }
      const message = redact(
        `the upstream closed the connection before answering (${(error as Error).message})`,
      );
      this.outcomes.add(
        channelOutcome(candidate, 'connect_error', attemptStarted, response, message),
      );
      return { kind: 'connect_error', message, fast: false };
    }
    if (answer.kind === 'whole' && response.statusCode >= 400) {
      // A refusal the client gets as the upstream worded it (a 400, a 404): its words only.
      const text = answer.body.toString('utf8');
      const clean = redact(text);
      if (clean !== text) answer = { ...answer, body: Buffer.from(clean) };
    }
    if (answer.kind === 'whole' && response.statusCode < 400) {
      // A success that is not JSON (a proxy's HTML page, a body cut short) is a broken
      // upstream, not an answer: nothing reached the client yet, so fail over. An answer its
      // front API read already (Anthropic's: its usage is the one before conversion) is not
      // read again.
      const summary =
        answer.summary ??
        summarizeJson(answer.body, { countItems: exchange.api.imagesOf !== undefined });
      if (!summary) {
        attempt.lease.release(0);
        const type = String(response.headers['content-type'] ?? 'no content type');
        const message = `the upstream answered ${response.statusCode} with a body that is not JSON (${type}, ${answer.body.length} bytes)`;
        this.outcomes.add(
          channelOutcome(candidate, 'server_error', attemptStarted, response, message),
        );
        return { kind: 'server_error', message, fast: false };
      }
      answer.summary = summary;
    }
    if (answer.kind === 'stream' && answer.translator?.failure) {
      // The provider refused in its first event (Anthropic's overloaded_error): nothing
      // reached the client yet, fail over as for a 429.
      attempt.lease.release(0);
      await answer.rest.return?.();
      const message = redact(`the upstream stream failed at once: ${answer.translator.failure}`);
      this.outcomes.add(
        channelOutcome(candidate, 'rate_limited', attemptStarted, response, message),
      );
      return { kind: 'rate_limited', message, fast: true };
    }
    this.outcomes.add(channelOutcome(candidate, kind, attemptStarted, response));
    return { attempt, response, answer, attemptStarted };
  }

  /**
   * An attempt the front API answers itself (a token count for a channel that has none of
   * Anthropic's): the channel is not asked, nor judged.
   */
  private async answeredHere(
    call: EdgeAnswer,
    attempt: Attempt,
    attemptStarted: number,
  ): Promise<Answered | GatewayError> {
    try {
      const answer = await call.local();
      return { attempt, response: null, answer, attemptStarted };
    } catch (error) {
      attempt.lease.release(0);
      if (error instanceof GatewayError) return error;
      throw error;
    }
  }
}

/** A failed attempt, and whether it was certain at once (it then costs no budget). */
type SettledFailure = AttemptFailure & { fast: boolean };

/** The client left: its request ends here, whatever the upstream was doing. */
export function clientGone(abort: AbortController, error: unknown): Error {
  return abort.signal.aborted
    ? new GatewayError(
        'upstream_error',
        'The client closed the connection before the upstream answered.',
      )
    : (error as Error);
}

/** No attempt delivered: say why, with the error codes of docs/architecture.md. */
export function exhaustedError(
  exchange: Pick<RoutedExchange, 'body' | 'token' | 'attempts'>,
  table: RoutingTable,
  failure: AttemptFailure | undefined,
): GatewayError {
  const { body, token, attempts } = exchange;
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
      { retryAfterMs: BUSY_RETRY_AFTER_MS },
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
      { retryAfterMs: BUSY_RETRY_AFTER_MS },
    );
  }
  return new GatewayError(
    'upstream_error',
    `The upstream request failed (${tried}; last: ${failure.message}).`,
  );
}
