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
  Matches,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';

// BullMQ queues: their names, the names of their jobs and the class of each job's data,
// typed like the event map (events.ts): `QUEUE_JOBS` at the end of this file.

/** A W3C trace context `traceparent` header value (version 00's length, any version). */
const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

export const Queues = {
  /** Usage records of finished gateway requests, many to a job; consumed by metering. */
  Usage: 'usage',
  /** Repeatable maintenance jobs of the metering worker (roll-ups, retention). */
  UsageMaintenance: 'usage-maintenance',
  /** Soft budget alerts to deliver to BUDGET_WEBHOOK_URL; metering adds and sends them. */
  BudgetAlerts: 'budget-alerts',
  /**
   * Request and response bodies of tokens with the request log on, written by metering;
   * and that log's retention run (docs/operations.md, "Request log").
   */
  RequestLog: 'request-log',
} as const;

export type QueueName = (typeof Queues)[keyof typeof Queues];

/**
 * A job of one `UsageRecord` on the `usage` queue: what edges before batches sent (job id =
 * request id), and a record metering set aside from its batch to be retried or
 * dead-lettered alone.
 */
export const USAGE_JOB_NAME = 'usage';

/** A job of many records (`UsageBatch`) on the `usage` queue: what edges send. */
export const USAGE_BATCH_JOB_NAME = 'usage-batch';

/** The jobs of the `usage-maintenance` queue; metering both schedules and runs them. */
export const MaintenanceJobs = {
  RollUp: 'roll-up',
  Retention: 'retention',
} as const;

/** The one job of the `budget-alerts` queue: POST a `BudgetAlert` to the webhook. */
export const BUDGET_WEBHOOK_JOB_NAME = 'budget-webhook';
/** The jobs of the `request-log` queue. */
export const RequestLogJobs = {
  /** Entries an edge gathered (`RequestLogBatch`). */
  Entries: 'entries',
  /** Deletes entries older than the retention (scheduled by metering). */
  Retention: 'retention',
} as const;

/** Most entries in one `entries` job. */
export const REQUEST_LOG_BATCH_MAX_ENTRIES = 100;

/** Most characters of one stored body, whatever an edge is configured with. */
export const REQUEST_LOG_MAX_BODY_CHARS = 1_048_576;

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
 * A webhook delivery is retried over about an hour (2 s, 4 s, ... 68 min) while the receiver
 * fails; a failed one stays in the failed set for an operator to see (docs/budgets.md,
 * "Alerts"). Nothing waits for it: a request never does.
 */
export const BUDGET_WEBHOOK_JOB_OPTIONS: Readonly<QueueJobOptions> = {
  attempts: 12,
  backoff: { type: 'exponential', delay: 2_000 },
  removeOnComplete: 1_000,
  removeOnFail: 1_000,
};

/**
 * `messages` and `messages.count_tokens` are Anthropic's Messages API in front of the
 * gateway, `responses` OpenAI's Responses API, `completions` OpenAI's legacy text
 * completions, `rerank` Cohere's and Jina's rerank, `audio.*` OpenAI's speech and transcripts,
 * whose usage counts characters and seconds rather than tokens, the `gemini.*` ones Gemini's
 * API (its generateContent and streamGenerateContent, countTokens, and embedContent with
 * batchEmbedContents) (docs/providers.md).
 */
export const GATEWAY_ENDPOINTS = [
  'audio.speech',
  'audio.transcriptions',
  'audio.translations',
  'chat.completions',
  'completions',
  'embeddings',
  'gemini.count_tokens',
  'gemini.embed',
  'gemini.generate',
  'images.generations',
  'messages',
  'messages.count_tokens',
  'moderations',
  'responses',
  'rerank',
] as const;
export type GatewayEndpoint = (typeof GATEWAY_ENDPOINTS)[number];

/** The part of an edge's block of holds one request was carved from (libs/spend). */
export class CarvedHold {
  @IsString() @MaxLength(128) block!: string;
  @IsInt() @Min(1) amount!: number;
}

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
  /**
   * The model the caller asked for, when a fallback model (`model`) served the request
   * instead (docs/routing.md, "Fallbacks across models").
   */
  @IsOptional() @IsString() @MaxLength(MAX_MODEL_LENGTH) requestedModel?: string;
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
  /**
   * The W3C `traceparent` of the request's span, when the edge traces: metering's
   * settlement span links to it (docs/operations.md, "Traces").
   */
  @IsOptional() @IsString() @Matches(TRACEPARENT) traceparent?: string;
  /**
   * The spend accounts the edge held the request's worst case on (libs/spend), when it
   * held: metering drops the request's hold on each, even on one it would not settle now
   * (a budget changed while the request ran), so no hold waits for its expiry.
   */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(16)
  @IsString({ each: true })
  @MaxLength(128, { each: true })
  holds?: string[];
  /**
   * When the holds were carved from the edge's block of holds rather than taken for this
   * request alone: metering gives `amount` back to that block on each account of `holds`
   * (docs/architecture.md, "Spend blocks").
   */
  @IsOptional() @ValidateNested() @Type(() => CarvedHold) carvedFrom?: CarvedHold;
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

/**
 * A soft budget alert, as the webhook receives it (the JSON body, signed:
 * `x-switchyard-signature: sha256=<hex HMAC-SHA256 of the body>`, docs/budgets.md).
 * Amounts are micro-dollars as decimal strings (they are bigints in the store).
 */
export class BudgetAlert {
  /** `budget.soft_threshold`: the only event so far. */
  @IsIn(['budget.soft_threshold']) event!: 'budget.soft_threshold';
  @IsInt() budgetId!: number;
  @IsString() @MaxLength(64) subject!: string;
  @IsIn(['token', 'member', 'team', 'gateway']) level!: 'token' | 'member' | 'team' | 'gateway';
  @IsString() @Matches(/^\d+$/) amount!: string;
  @IsString() @Matches(/^\d+$/) spent!: string;
  @IsInt() @Min(0) softPercent!: number;
  @IsIn(['none', 'day', 'week', 'month']) period!: 'none' | 'day' | 'week' | 'month';
  /** ISO 8601 instants; `periodEnd` null for period `none`. */
  @IsString() periodStart!: string;
  @IsOptional() @IsString() periodEnd!: string | null;
  @IsString() firedAt!: string;
}

/**
 * One logged request: its bodies as the edge kept them, already redacted of secrets and cut
 * to the edge's REQUEST_LOG_MAX_BYTES (the `…Truncated` flags say whether they were cut).
 */
export class RequestLogEntry {
  @IsString() @MaxLength(64) requestId!: string;
  @IsInt() tokenId!: number;
  @IsIn(GATEWAY_ENDPOINTS) endpoint!: GatewayEndpoint;
  @IsString() @MaxLength(MAX_MODEL_LENGTH) model!: string;
  @IsInt() status!: number;
  /** The W3C trace id (32 hex digits), when the edge traced the request. */
  @IsOptional() @IsString() @Matches(/^[0-9a-f]{32}$/) traceId?: string;
  @IsString() @MaxLength(REQUEST_LOG_MAX_BODY_CHARS) requestBody!: string;
  @IsString() @MaxLength(REQUEST_LOG_MAX_BODY_CHARS) responseBody!: string;
  @IsBoolean() requestTruncated!: boolean;
  @IsBoolean() responseTruncated!: boolean;
  /** Epoch milliseconds when the request arrived. */
  @IsInt() requestedAt!: number;
}

/**
 * The data of an `entries` job of the `request-log` queue. Metering validates each entry on
 * its own, so a malformed one is dropped alone.
 */
export class RequestLogBatch {
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(REQUEST_LOG_BATCH_MAX_ENTRIES)
  entries!: RequestLogEntry[];
}

/** The data of a job that carries none (a scheduled maintenance run). */
export class NoJobData {}

/** Every queue's jobs: job name → the class of its data. */
export const QUEUE_JOBS = {
  [Queues.Usage]: { [USAGE_JOB_NAME]: UsageRecord, [USAGE_BATCH_JOB_NAME]: UsageBatch },
  [Queues.UsageMaintenance]: {
    [MaintenanceJobs.RollUp]: NoJobData,
    [MaintenanceJobs.Retention]: NoJobData,
  },
  [Queues.BudgetAlerts]: { [BUDGET_WEBHOOK_JOB_NAME]: BudgetAlert },
  [Queues.RequestLog]: {
    [RequestLogJobs.Entries]: RequestLogBatch,
    [RequestLogJobs.Retention]: NoJobData,
  },
} as const satisfies Record<QueueName, Record<string, new () => object>>;

export type JobName<Q extends QueueName> = keyof (typeof QUEUE_JOBS)[Q] & string;

/** What a producer puts in a job of that name. */
export type JobData<
  Q extends QueueName,
  N extends JobName<Q>,
> = (typeof QUEUE_JOBS)[Q][N] extends new () => infer T ? T : never;
