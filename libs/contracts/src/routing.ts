import 'reflect-metadata';
import { Type } from 'class-transformer';
import {
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Min,
  ValidateNested,
} from 'class-validator';

// What the router tells every edge about where requests may go, and what the edges
// tell the router about how it went.

export const CHANNEL_KINDS = ['single', 'aggregated'] as const;
export type ChannelKind = (typeof CHANNEL_KINDS)[number];

/** The wire format a channel speaks upstream (docs/providers.md); `openai` is any OpenAI-compatible service. */
export const CHANNEL_PROVIDERS = ['openai', 'azure', 'anthropic', 'gemini', 'bedrock'] as const;
export type ChannelProvider = (typeof CHANNEL_PROVIDERS)[number];

/** Settings a provider needs besides its base URL and keys; each applies to one provider. */
export class ProviderSettings {
  /** Anthropic: the `anthropic-version` header sent upstream. */
  @IsOptional() @IsString() anthropicVersion?: string;
  /** Azure OpenAI: the `api-version` query parameter. */
  @IsOptional() @IsString() apiVersion?: string;
  /** Bedrock: the AWS region requests are signed for. */
  @IsOptional() @IsString() region?: string;
}

/** One upstream account as the edges see it: only keys that may take traffic are listed. */
export class RoutedKey {
  @IsInt() id!: number;
  /** Encrypted with the suite's secret keys; edges decrypt it when they first use it. */
  @IsString() secretCiphertext!: string;
  @IsOptional() @IsInt() @Min(1) rpm!: number | null;
  @IsOptional() @IsInt() @Min(1) tpm!: number | null;
  @IsOptional() @IsInt() @Min(1) concurrency!: number | null;
  /** Epoch ms until which the account is cooling down after a 429; null when it is not. */
  @IsOptional() @IsInt() coolingUntil!: number | null;
}

export class RoutedChannel {
  @IsInt() id!: number;
  @IsString() name!: string;
  @IsIn(CHANNEL_KINDS) kind!: ChannelKind;
  @IsIn(CHANNEL_PROVIDERS) provider!: ChannelProvider;
  @ValidateNested() @Type(() => ProviderSettings) settings!: ProviderSettings;
  @IsString() baseUrl!: string;
  @IsArray() @IsString({ each: true }) models!: string[];
  @IsObject() modelMapping!: Record<string, string>;
  @IsInt() priority!: number;
  @IsInt() @Min(0) weight!: number;
  @IsArray() @IsString({ each: true }) groups!: string[];
  @IsArray() @ValidateNested({ each: true }) @Type(() => RoutedKey) keys!: RoutedKey[];
  /** The channel's own wait for response headers; absent or null: the edge's default. */
  @IsOptional() @IsInt() @Min(1) firstByteTimeoutMs?: number | null;
}

/**
 * A channel that serves models but may take no traffic now (its breaker is open, it or all
 * its keys were disabled automatically): requests for its models are a 503 `retry later`,
 * not a 404 `no such model`.
 */
export class RestingChannel {
  @IsInt() id!: number;
  @IsArray() @IsString({ each: true }) models!: string[];
  @IsArray() @IsString({ each: true }) groups!: string[];
}

/** The Redis key under which the router keeps its latest snapshot, for edges starting while it is away. */
export const ROUTING_SNAPSHOT_KEY = 'routing:snapshot';

/** The full routing state. Edges keep the highest version they have seen. */
export class RoutingSnapshot {
  @IsInt() @Min(0) version!: number;
  @IsInt() generatedAt!: number;
  @IsArray() @ValidateNested({ each: true }) @Type(() => RoutedChannel) channels!: RoutedChannel[];
  /** Absent in snapshots of routers that predate it. */
  @IsOptional()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => RestingChannel)
  resting?: RestingChannel[];
}

/**
 * What changed from the routing state `baseVersion` to `version`: the channels added or
 * changed, whole; the ids of those that may no longer take traffic; the resting list, whole
 * (it is short). An edge holding `baseVersion` applies it; any other edge reads the stored
 * snapshot (ROUTING_SNAPSHOT_KEY) instead. A change of one channel costs the edges that
 * channel, not the whole state (docs/architecture.md, "Routing snapshots and changes").
 */
export class RoutingChange {
  @IsInt() @Min(1) version!: number;
  /** 0: no base an edge can hold (the first publish of a router); read the stored snapshot. */
  @IsInt() @Min(0) baseVersion!: number;
  @IsInt() generatedAt!: number;
  @IsArray() @ValidateNested({ each: true }) @Type(() => RoutedChannel) changed!: RoutedChannel[];
  @IsArray() @IsInt({ each: true }) removed!: number[];
  @IsArray() @ValidateNested({ each: true }) @Type(() => RestingChannel) resting!: RestingChannel[];
}

/** How one upstream attempt ended, as far as the health of the channel and key goes. */
export const OUTCOME_KINDS = [
  'ok',
  'banned',
  'rate_limited',
  'server_error',
  'timeout',
  'connect_error',
  'client_error',
] as const;
export type OutcomeKind = (typeof OUTCOME_KINDS)[number];

export class ChannelOutcome {
  @IsInt() channelId!: number;
  @IsInt() keyId!: number;
  @IsIn(OUTCOME_KINDS) kind!: OutcomeKind;
  @IsOptional() @IsInt() httpStatus?: number;
  @IsInt() @Min(0) latencyMs!: number;
  /** From the upstream's Retry-After, when it sent one. */
  @IsOptional() @IsInt() @Min(0) retryAfterMs?: number;
  @IsOptional() @IsString() detail?: string;
  @IsInt() at!: number;
}

export class ChannelOutcomeBatch {
  @IsString() edgeId!: string;
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => ChannelOutcome)
  outcomes!: ChannelOutcome[];
}

/** How an upstream's HTTP status counts for the health of its channel and account. */
export function outcomeOfStatus(status: number): OutcomeKind {
  if (status < 400) return 'ok';
  if (status === 401 || status === 403) return 'banned';
  if (status === 429) return 'rate_limited';
  if (status === 408 || status >= 500) return 'server_error';
  return 'client_error';
}

/** True when a failure of this kind should send the request to another channel. */
export function isRetryableOutcome(kind: OutcomeKind): boolean {
  return kind !== 'ok' && kind !== 'client_error';
}

export class RoutingSnapshotRequest {
  @IsOptional() @IsInt() haveVersion?: number;
  @IsOptional() @IsBoolean() force?: boolean;
}
