import {
  IntegerVariable,
  ListVariable,
  OneOfVariable,
  PatternListVariable,
  PortVariable,
  TestOnlyVariable,
  TextVariable,
  TimeZoneVariable,
  UrlVariable,
} from '../variables.js';
import { CIDR } from './base.js';
import { SecretStoreEnv } from './database.js';

export const UNPRICED_MODEL_POLICIES = ['bill', 'refuse'] as const;
export type UnpricedModelPolicy = (typeof UNPRICED_MODEL_POLICIES)[number];

export class EdgeEnv extends SecretStoreEnv {
  @PortVariable()
  EDGE_PORT: number = 3000;

  /** `/metrics` (and probes) only, never exposed publicly (docs/architecture.md, "Operations ports"). */
  @PortVariable()
  EDGE_OPS_PORT: number = 3010;

  @UrlVariable(['http', 'https'])
  ADMIN_URL: string = 'http://127.0.0.1:3001';

  /** The built dashboard served at `/`; unset: the dashboard package's `dist/`. */
  @TextVariable({ optional: true, expects: 'a directory path' })
  DASHBOARD_DIR?: string;

  /**
   * Proxies whose X-Forwarded-For is believed (nginx on loopback: docs/specification.md,
   * "Reverse proxy").
   */
  @ListVariable(CIDR, 'IP addresses or CIDRs')
  TRUSTED_PROXIES: string[] = ['127.0.0.1/32', '::1/128'];

  @IntegerVariable(1024, 100 * 1024 * 1024)
  MAX_BODY_BYTES: number = 10 * 1024 * 1024;

  /** No response headers from the upstream within this time: try the next channel. */
  @IntegerVariable(100, 600_000)
  UPSTREAM_FIRST_BYTE_TIMEOUT_MS: number = 60_000;

  /** Silence between two chunks of a response after which it is cut. */
  @IntegerVariable(100, 600_000)
  UPSTREAM_IDLE_TIMEOUT_MS: number = 300_000;

  /**
   * Slow upstream failures (5xx, timeouts, cut connections) a request goes through before it
   * fails; refusals and refused connections do not count (docs/architecture.md).
   */
  @IntegerVariable(1, 10)
  FAILOVER_ATTEMPTS: number = 3;

  /** No new upstream attempt starts this long after a request arrived; waits are cut to fit. */
  @IntegerVariable(100, 3_600_000)
  FAILOVER_TIME_BUDGET_MS: number = 120_000;

  /**
   * What a token with a quota may do with a model that has no price: `bill` it at
   * metering's DEFAULT_MODEL_PRICE, or `refuse` it (403 `model_not_priced`). Tokens
   * without a quota are always served (docs/architecture.md, "Unpriced models").
   */
  @OneOfVariable(UNPRICED_MODEL_POLICIES)
  UNPRICED_MODELS: UnpricedModelPolicy = 'bill';

  /**
   * The zone whose midnights start budget periods (days, Mondays, the 1st): the same in
   * the edge, metering and the admin service (docs/budgets.md, "The model").
   */
  @TimeZoneVariable()
  BUDGET_TIME_ZONE: string = 'UTC';

  /**
   * Test hook, refused in production: a file holding milliseconds to add to the edge's
   * clock, read at every request, so an end-to-end test moves budget periods on without
   * sleeping (docs/budgets.md, "Testing periods").
   */
  @TestOnlyVariable()
  TEST_CLOCK_FILE?: string;

  /** Where usage records wait when Redis is unreachable. */
  @TextVariable()
  USAGE_SPOOL_DIR: string = 'var/spool/edge';

  /**
   * Most bytes of each body (request and response) the request log keeps of a request of a
   * token with the log on; the rest is cut (docs/operations.md, "Request log").
   */
  @IntegerVariable(1_024, 1_048_576)
  REQUEST_LOG_MAX_BYTES: number = 32_768;

  /**
   * What the request log masks besides secrets and credential shapes: regular expressions
   * whose matches are replaced by `[redacted]` (e.g. customer numbers, e-mail addresses).
   */
  @PatternListVariable()
  REQUEST_LOG_REDACT_PATTERNS: string[] = [];
}
