import { IsOptional, ValidateBy } from 'class-validator';
import { IntegerVariable, PortVariable, TimeZoneVariable, UrlVariable } from '../variables.js';
import { StoreEnv } from './database.js';

export class MeteringEnv extends StoreEnv {
  @PortVariable()
  METERING_OPS_PORT: number = 3004;

  /**
   * Days raw usage logs (UsageLog) are kept: a month partition is dropped once every row of
   * it is older, its days rolled up first. Unset, logs are kept for ever. The daily roll-ups
   * (UsageDaily) are kept for ever either way (docs/scaling.md, "Usage partitions").
   */
  @IntegerVariable(1, 36_500)
  @IsOptional()
  USAGE_LOG_RETENTION_DAYS?: number;

  /**
   * The former name of USAGE_LOG_RETENTION_DAYS (which it was, with a default of 90), read
   * when that is unset; metering warns at start while it is set.
   */
  @IntegerVariable(1, 36_500)
  @IsOptional()
  USAGE_RETENTION_DAYS?: number;

  /** Request log entries (bodies of opted-in tokens) older than this are deleted, hourly. */
  @IntegerVariable(1, 3650)
  REQUEST_LOG_RETENTION_DAYS: number = 7;

  /**
   * Price, in micro-dollars per million tokens (input and output), of a model with no price:
   * $60 per million, one-api's default ratio of 30, so that an unpriced model is never free
   * (docs/architecture.md, "Unpriced models").
   */
  @IntegerVariable(0, 1_000_000_000)
  DEFAULT_MODEL_PRICE: number = 60_000_000;

  /**
   * Usage jobs taken from the queue at once; their records wait together for their
   * transactions to commit. An edge's job holds up to 500 records, so a few jobs keep two
   * transactions busy; more only hold records in memory past their jobs' locks (a job
   * whose lock lapses is delivered again, billed once but settled twice). Jobs of one
   * record (edges before batches, records set aside) settle slowly at this setting: raise
   * it (1,000 suits them) while edges older than batches still run (docs/architecture.md).
   */
  @IntegerVariable(1, 20_000)
  USAGE_CONCURRENCY: number = 16;

  /** Most usage records settled in one transaction. */
  @IntegerVariable(1, 10_000)
  USAGE_BATCH_SIZE: number = 500;

  /**
   * How long the first record of a batch waits for others before the batch is written. A
   * transaction costs about as much for one record as for fifty, and an edge sends a job
   * every 10 ms at most, so waiting for several jobs settles usage up to 100 ms later for
   * a fraction of the work at everyday rates (docs/performance.md, "Metering"). The batch
   * goes sooner when every job the worker holds (`USAGE_CONCURRENCY`) is waiting in it, so
   * the wait never caps how many jobs a second it settles. Jobs stay in Redis, locked,
   * until their transaction commits: nothing waits only in memory.
   */
  @IntegerVariable(0, 1_000)
  USAGE_BATCH_WAIT_MS: number = 100;

  /** How often the daily roll-ups of today and yesterday are recomputed. */
  @IntegerVariable(1_000, 86_400_000)
  USAGE_ROLLUP_INTERVAL_MS: number = 300_000;

  /** The zone whose midnights start budget periods: the edge's BUDGET_TIME_ZONE. */
  @TimeZoneVariable()
  BUDGET_TIME_ZONE: string = 'UTC';

  /**
   * Where soft budget alerts are POSTed (JSON, signed with BUDGET_WEBHOOK_SECRET); unset:
   * alerts are only audited (docs/budgets.md, "Alerts").
   */
  @UrlVariable(['http', 'https'])
  @IsOptional()
  BUDGET_WEBHOOK_URL?: string;

  /** The HMAC-SHA256 key of the webhook's `x-switchyard-signature`; required with the URL. */
  @ValidateBy({
    name: 'isWebhookSecret',
    validator: {
      validate: (value: unknown, args) =>
        typeof value === 'string'
          ? value.length >= 16
          : (args?.object as MeteringEnv).BUDGET_WEBHOOK_URL === undefined,
      defaultMessage: () => 'a secret of 16 characters or more, set with BUDGET_WEBHOOK_URL',
    },
  })
  BUDGET_WEBHOOK_SECRET?: string;
}
