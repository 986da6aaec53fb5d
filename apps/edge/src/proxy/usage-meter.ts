import { Injectable } from '@nestjs/common';
import { type UsageRecord } from '@switchyard/contracts';
import { RequestLog } from '../request-log/request-log.js';
import { UsagePublisher } from '../usage/usage-publisher.js';
import { type Attempt, type Delivery, type Exchange, type RoutedExchange } from './exchange.js';

// The meter step: the account's room is given back with what was used, and the usage goes
// to metering without making the client wait for it; so do the bodies of a token with the
// request log on (request-log/), a flag read with the token, so other tokens pay nothing.

@Injectable()
export class UsageMeter {
  constructor(
    private readonly usage: UsagePublisher,
    private readonly requestLog: RequestLog,
  ) {}

  /** A delivered answer: its account lease is settled with the tokens it used. */
  delivered(exchange: RoutedExchange, attempt: Attempt, delivery: Delivery): void {
    const used = delivery.usage
      ? delivery.usage.promptTokens + delivery.usage.completionTokens
      : exchange.body.estimatedTokens;
    attempt.lease.release(used);
    this.record(exchange, delivery);
  }

  record(exchange: Exchange, delivery: Delivery): void {
    this.usage.record(usageRecordOf(exchange, delivery));
    if (exchange.token.requestLog) this.requestLog.record(exchange, delivery);
  }
}

export function usageRecordOf(exchange: Exchange, delivery: Delivery): UsageRecord {
  const { body, candidate, request } = exchange;
  const record: UsageRecord = {
    requestId: request.id,
    tokenId: exchange.token.id,
    channelId: candidate?.channel.id ?? null,
    keyId: candidate?.key.id ?? null,
    endpoint: exchange.api.endpoint,
    // Cut to the contract's length (without splitting a character) by the publisher.
    model: body?.model ?? '',
    upstreamModel: delivery.upstreamModel ?? null,
    ...(exchange.requestedModel !== undefined ? { requestedModel: exchange.requestedModel } : {}),
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
  // Metering drops the request's holds on each, whatever it settles (docs/budgets.md).
  if (exchange.holds) record.holds = exchange.holds;
  if (exchange.carved) record.carvedFrom = exchange.carved;
  // Without reported usage, metering counts what was sent and received with a tokenizer.
  if (!delivery.usage && delivery.firstByteMs !== null && body && delivery.status < 400) {
    record.promptText = body.promptText();
    record.completionText = delivery.completionText;
    if (delivery.images !== undefined) record.imageCount = delivery.images;
  }
  return record;
}
