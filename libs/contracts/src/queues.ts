import 'reflect-metadata';
import { MAX_MODEL_LENGTH } from '@switchyard/domain';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';

// BullMQ queues: the name and the class of a job's data.

export const Queues = {
  /** Usage records of finished gateway requests, many to a job; consumed by metering. */
  Usage: 'usage',
  /** Repeatable maintenance jobs of the metering worker (roll-ups, retention). */
  UsageMaintenance: 'usage-maintenance',
} as const;

/**
 * A job of one `UsageRecord` on the `usage` queue: what edges before batches sent (job id =
 * request id), and a record metering set aside from its batch to be retried or
 * dead-lettered alone.
 */
export const USAGE_JOB_NAME = 'usage';

/** A job of many records (`UsageBatch`) on the `usage` queue: what edges send. */
export const USAGE_BATCH_JOB_NAME = 'usage-batch';

/** Most records in one `usage-batch` job. */
export const USAGE_BATCH_MAX_RECORDS = 500;

/** Job options in BullMQ's shape, without depending on BullMQ. */
export interface QueueJobOptions {
  attempts: number;
  backoff: { type: 'exponential' | 'fixed'; delay: number };
  removeOnComplete: boolean | number;
  removeOnFail: boolean | number;
}

/**
 * The options of every job on the `usage` queue (`UsageQueue` in libs/messaging adds them).
 * A job that fails for a reason other than the database being down (metering waits for it
 * without spending attempts) is retried over about two minutes (1 s, 2 s, ... 64 s), then
 * stays in the failed set: the dead-letter list an operator inspects and replays. Completed
 * jobs are dropped at once: `UsageLog.requestId` is the record of what was billed.
 */
export const USAGE_JOB_OPTIONS: Readonly<QueueJobOptions> = {
  attempts: 8,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: true,
  removeOnFail: false,
};

/**
 * `messages` and `messages.count_tokens` are Anthropic's Messages API in front of the
 * gateway, `responses` OpenAI's Responses API (docs/providers.md).
 */
export const GATEWAY_ENDPOINTS = [
  'chat.completions',
  'embeddings',
  'images.generations',
  'messages',
  'messages.count_tokens',
  'responses',
] as const;
export type GatewayEndpoint = (typeof GATEWAY_ENDPOINTS)[number];

export class ReportedUsage {
  /** Every input token, those read from the provider's prompt cache included. */
  @IsInt() @Min(0) promptTokens!: number;
  @IsInt() @Min(0) completionTokens!: number;
  /** The part of `promptTokens` read from the prompt cache (priced at the cached-input price). */
  @IsOptional() @IsInt() @Min(0) cachedTokens?: number;
}

/** One finished request, as the edge saw it. */
export class UsageRecord {
  @IsString() @MaxLength(64) requestId!: string;
  @IsInt() tokenId!: number;
  @IsOptional() @IsInt() channelId!: number | null;
  @IsOptional() @IsInt() keyId!: number | null;
  @IsIn(GATEWAY_ENDPOINTS) endpoint!: GatewayEndpoint;
  @IsString() @MaxLength(MAX_MODEL_LENGTH) model!: string;
  @IsOptional() @IsString() @MaxLength(MAX_MODEL_LENGTH) upstreamModel!: string | null;
  @IsBoolean() stream!: boolean;
  /** The HTTP status the client got (200 also for a stream cut after its start). */
  @IsInt() status!: number;
  @IsOptional() @IsString() errorCode!: string | null;
  /** What the upstream reported; null when it reported nothing. */
  @IsOptional() @ValidateNested() @Type(() => ReportedUsage) usage!: ReportedUsage | null;
  /** Only when `usage` is null and an upstream answered: the texts to count with the tokenizer. */
  @IsOptional() @IsString() promptText?: string;
  @IsOptional() @IsString() completionText?: string;
  /**
   * `images.generations` without token usage: how many images the upstream returned.
   * Each is billed as 1,000 completion tokens at the model's price (one-api's convention).
   */
  @IsOptional() @IsInt() @Min(0) imageCount?: number;
  @IsInt() @Min(0) latencyMs!: number;
  @IsOptional() @IsInt() @Min(0) firstByteMs!: number | null;
  @IsInt() @Min(0) attempts!: number;
  @IsOptional() @IsString() clientIp!: string | null;
  /** Epoch milliseconds when the request arrived. */
  @IsInt() requestedAt!: number;
}

/**
 * The data of a `usage-batch` job: the records an edge gathered for a few milliseconds.
 * Metering validates each record on its own, so a malformed one is set aside alone and
 * the rest of the batch is billed.
 */
export class UsageBatch {
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(USAGE_BATCH_MAX_RECORDS)
  records!: UsageRecord[];
}
