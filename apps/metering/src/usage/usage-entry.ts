import { Injectable } from '@nestjs/common';
import { UsageRecord, storableUsageRecord } from '@switchyard/contracts';
import { payloadValidator } from '@switchyard/messaging';
import { costOf } from '@switchyard/domain';
import { PriceBook } from '../pricing/price-book.js';
import { TokenCounter } from '@switchyard/providers';

/** One usage record ready to be written: counted, priced, and fitting its columns. */
export interface UsageEntry {
  requestId: string;
  tokenId: number;
  channelId: number | null;
  keyId: number | null;
  endpoint: string;
  model: string;
  upstreamModel: string | null;
  /** The model asked for, when a fallback (`model`) served: docs/routing.md, "Fallbacks across models". */
  requestedModel: string | null;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  tokensCounted: boolean;
  /** Micro-dollars at the model's price, before the token's price group multiplies it. */
  cost: bigint;
  status: number;
  errorCode: string | null;
  latencyMs: number;
  firstByteMs: number | null;
  stream: boolean;
  attempts: number;
  clientIp: string | null;
  requestedAt: Date;
  /** The spend accounts the edge held the request on (docs/budgets.md, "Settlement"). */
  holds: string[];
  /** The edge's block of holds the request was carved from (docs/architecture.md, "Spend blocks"). */
  carved: { block: string; amount: number } | null;
}

/** A record that passed the contract's validation but cannot be stored as it is. */
export class InvalidUsageError extends Error {
  override readonly name = 'InvalidUsageError';
}

const INT4_MAX = 2_147_483_647;
/** `errorCode` and `clientIp` are informative; longer values are cut to their columns. */
const SHORT_TEXT = 64;
/** An image without token usage bills like this many completion tokens (one-api's rule). */
export const TOKENS_PER_IMAGE = 1_000;

function int4(field: string, value: number): number {
  if (!Number.isSafeInteger(value) || value > INT4_MAX || value < -INT4_MAX - 1) {
    throw new InvalidUsageError(`${field} is out of range: ${value}`);
  }
  return value;
}

function optionalInt4(field: string, value: number | null | undefined): number | null {
  return value === null || value === undefined ? null : int4(field, value);
}

function shortText(value: string | null | undefined): string | null {
  return value === null || value === undefined ? null : value.slice(0, SHORT_TEXT);
}

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  /** The part of promptTokens read from a prompt cache (only an upstream reports it). */
  cachedTokens?: number;
  /** True when the tokenizer counted them (the upstream reported none). */
  tokensCounted: boolean;
}

const NOTHING_USED: TokenUsage = { promptTokens: 0, completionTokens: 0, tokensCounted: false };

@Injectable()
export class UsageEntryFactory {
  /** The `UsageRecord` contract, its metadata read once: it runs for every record. */
  private readonly validRecord = payloadValidator(UsageRecord);

  constructor(
    private readonly prices: PriceBook,
    private readonly tokens: TokenCounter,
  ) {}

  /**
   * A received record validated against the contract, counted and priced. Throws
   * InvalidPayloadError or InvalidUsageError for a record that must not be billed as it is;
   * a promise only when the tokenizer must count.
   */
  fromPayload(data: unknown): UsageEntry | Promise<UsageEntry> {
    // Edges queue storable records; one spooled or queued by an older edge is made so here.
    const record = storableUsageRecord(this.validRecord(data));
    const tokens = this.tokenUsage(record);
    return tokens instanceof Promise
      ? tokens.then((counted) => this.create(record, counted))
      : this.create(record, tokens);
  }

  /**
   * What the request used: as the upstream reported it, else counted with the tokenizer
   * (a promise only then, so the usual case stays synchronous).
   */
  private tokenUsage(record: UsageRecord): TokenUsage | Promise<TokenUsage> {
    if (record.usage) {
      return {
        promptTokens: record.usage.promptTokens,
        completionTokens: record.usage.completionTokens,
        cachedTokens: record.usage.cachedTokens ?? 0,
        tokensCounted: false,
      };
    }
    return this.countTokens(record);
  }

  /** Prices one request and checks it fits its columns. */
  private create(record: UsageRecord, tokens: TokenUsage): UsageEntry {
    const requestedAt = new Date(record.requestedAt);
    if (Number.isNaN(requestedAt.getTime()) || record.requestedAt < 0) {
      throw new InvalidUsageError(`requestedAt is not a time: ${record.requestedAt}`);
    }
    const upstreamModel = record.upstreamModel ?? null;
    const price = this.prices.priceFor(record.model, upstreamModel);
    return {
      requestId: record.requestId,
      tokenId: int4('tokenId', record.tokenId),
      channelId: optionalInt4('channelId', record.channelId),
      keyId: optionalInt4('keyId', record.keyId),
      endpoint: record.endpoint,
      model: record.model,
      upstreamModel,
      requestedModel: record.requestedModel ?? null,
      promptTokens: int4('promptTokens', tokens.promptTokens),
      completionTokens: int4('completionTokens', tokens.completionTokens),
      cachedTokens: int4('cachedTokens', tokens.cachedTokens ?? 0),
      tokensCounted: tokens.tokensCounted,
      cost: costOf(tokens.promptTokens, tokens.completionTokens, price, tokens.cachedTokens),
      status: int4('status', record.status),
      errorCode: shortText(record.errorCode),
      latencyMs: int4('latencyMs', record.latencyMs),
      firstByteMs: optionalInt4('firstByteMs', record.firstByteMs),
      stream: record.stream,
      attempts: int4('attempts', record.attempts),
      clientIp: shortText(record.clientIp),
      requestedAt,
      holds: record.holds ?? [],
      carved: record.carvedFrom
        ? { block: record.carvedFrom.block, amount: record.carvedFrom.amount }
        : null,
    };
  }

  private async countTokens(record: UsageRecord): Promise<TokenUsage> {
    const images = record.imageCount ?? 0;
    if (!record.promptText && !record.completionText && images === 0) {
      // No upstream answered: nothing was used.
      return NOTHING_USED;
    }
    const model = record.upstreamModel ?? record.model;
    const [prompt, completion] = await Promise.all([
      this.tokens.count(model, record.promptText),
      this.tokens.count(model, record.completionText),
    ]);
    return {
      promptTokens: prompt,
      completionTokens: completion + images * TOKENS_PER_IMAGE,
      tokensCounted: true,
    };
  }
}
