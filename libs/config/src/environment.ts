import 'reflect-metadata';
import {
  IntegerVariable,
  ListVariable,
  OneOfVariable,
  PortVariable,
  TextVariable,
  UrlVariable,
} from './variables.js';

// Every environment variable the suite reads, grouped by the apps that read it.
// Each app validates exactly one of the leaf classes at start-up.

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const UNPRICED_MODEL_POLICIES = ['bill', 'refuse'] as const;
export type UnpricedModelPolicy = (typeof UNPRICED_MODEL_POLICIES)[number];

const CIDR = /^(\d{1,3}(\.\d{1,3}){3}(\/\d{1,2})?|[0-9a-fA-F:]+(\/\d{1,3})?)$/;
const SECRET_KEY = /^[A-Za-z0-9_-]{1,16}:[A-Za-z0-9+/]{43}=$/;

export class BaseEnv {
  @OneOfVariable(['development', 'production', 'test'])
  NODE_ENV: string = 'development';

  @OneOfVariable(LOG_LEVELS)
  LOG_LEVEL: LogLevel = 'info';

  @TextVariable({ expects: 'an IP address to listen on' })
  BIND_ADDRESS: string = '0.0.0.0';

  /** How long SIGTERM waits for in-flight requests and jobs before closing anyway. */
  @IntegerVariable(0, 600_000)
  SHUTDOWN_GRACE_MS: number = 10_000;
}

export class RedisEnv extends BaseEnv {
  @UrlVariable(['redis', 'rediss'])
  REDIS_URL: string = 'redis://127.0.0.1:6379';

  /** Namespace of every Redis key, channel and queue, so installations and test runs never meet. */
  @TextVariable({
    pattern: /^[a-z0-9][a-z0-9_-]{0,31}$/,
    expects: 'lowercase letters, digits, - or _ (at most 32)',
  })
  REDIS_PREFIX: string = 'sy';
}

export class StoreEnv extends RedisEnv {
  @UrlVariable(['postgres', 'postgresql'])
  DATABASE_URL: string = 'postgresql://postgres@127.0.0.1:5432/switchyard';

  @IntegerVariable(1, 200)
  DATABASE_POOL_SIZE: number = 10;
}

export class SecretStoreEnv extends StoreEnv {
  /**
   * Keys that encrypt upstream secrets at rest: `id:base64-of-32-bytes`, comma-separated.
   * The first encrypts; all decrypt, so a key can be rotated in without downtime.
   */
  @ListVariable(SECRET_KEY, 'id:base64 keys of 32 bytes')
  SECRET_KEYS!: string[];
}

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

  /** Where usage records wait when Redis is unreachable. */
  @TextVariable()
  USAGE_SPOOL_DIR: string = 'var/spool/edge';
}

export class RouterEnv extends SecretStoreEnv {
  /** Health and metrics only; the router's work arrives over Redis. */
  @PortVariable()
  ROUTER_OPS_PORT: number = 3003;

  /** How often automatically disabled keys and open breakers are probed. */
  @IntegerVariable(100, 3_600_000)
  PROBE_INTERVAL_MS: number = 60_000;
}

export class AdminEnv extends SecretStoreEnv {
  @PortVariable()
  ADMIN_PORT: number = 3001;

  /** `/metrics` (and probes) only, never exposed publicly (docs/architecture.md, "Operations ports"). */
  @PortVariable()
  ADMIN_OPS_PORT: number = 3011;

  /** The first gateway administrator, created when none exists. */
  @TextVariable({
    optional: true,
    pattern: /^[A-Za-z0-9_.-]{3,64}$/,
    expects: '3 to 64 letters, digits, _ . or -',
  })
  ADMIN_USERNAME?: string;

  @TextVariable({ optional: true, pattern: /^.{8,256}$/, expects: 'at least 8 characters' })
  ADMIN_PASSWORD?: string;

  @IntegerVariable(60, 30 * 86_400)
  SESSION_TTL_SECONDS: number = 12 * 3600;

  /** Peers whose X-Forwarded-For is believed (the edge, on loopback by default). */
  @ListVariable(CIDR, 'IP addresses or CIDRs')
  TRUSTED_PROXIES: string[] = ['127.0.0.1/32', '::1/128'];

  /**
   * Failed sign-ins on one account from one client address before each further one doubles
   * the wait there (docs/reliability.md, "Sign-in throttling").
   */
  @IntegerVariable(1, 1000)
  LOGIN_MAX_FAILURES_PER_ACCOUNT: number = 5;

  /** Failed sign-ins from one client address, over all accounts, before each doubles the wait. */
  @IntegerVariable(1, 100_000)
  LOGIN_MAX_FAILURES_PER_IP: number = 20;

  /**
   * Failed sign-ins on one account from all addresses within a day before it is refused from
   * everywhere (guessing from many addresses); `cli.js unlock-login` lifts it.
   */
  @IntegerVariable(10, 10_000_000)
  LOGIN_ACCOUNT_CEILING: number = 1000;

  /** The wait after the first failure past the free ones; each further failure doubles it. */
  @IntegerVariable(1, 3600)
  LOGIN_FIRST_DELAY_SECONDS: number = 1;

  /** The longest wait one address is given (well under the day after which failures are forgotten). */
  @IntegerVariable(1, 6 * 3600)
  LOGIN_MAX_DELAY_SECONDS: number = 3600;

  /** How long a channel test waits for the upstream's whole answer. */
  @IntegerVariable(100, 600_000)
  CHANNEL_TEST_TIMEOUT_MS: number = 15_000;
}

export class ChatEnv extends SecretStoreEnv {
  @PortVariable()
  CHAT_PORT: number = 3002;

  /** `/metrics` (and probes) only, never exposed publicly (docs/architecture.md, "Operations ports"). */
  @PortVariable()
  CHAT_OPS_PORT: number = 3012;

  @TextVariable({
    optional: true,
    pattern: /^[A-Za-z0-9_.-]{3,64}$/,
    expects: '3 to 64 letters, digits, _ . or -',
  })
  CHAT_ADMIN_USERNAME?: string;

  @TextVariable({ optional: true, pattern: /^.{8,256}$/, expects: 'at least 8 characters' })
  CHAT_ADMIN_PASSWORD?: string;

  @IntegerVariable(60, 30 * 86_400)
  SESSION_TTL_SECONDS: number = 7 * 86_400;

  @OneOfVariable(['community', 'plus'])
  EDITION: string = 'community';

  /** Plus edition: the relay base URLs an API key record may use without a license. */
  @ListVariable(/^https?:\/\/\S+$/, 'http(s) URLs')
  RECOMMENDED_RELAYS: string[] = [];

  /** Ed25519 public key (PEM or base64 SPKI) that signs licenses. */
  @TextVariable({ optional: true })
  LICENSE_PUBLIC_KEY?: string;

  @IntegerVariable(1000, 600_000)
  CHAT_UPSTREAM_TIMEOUT_MS: number = 120_000;

  /**
   * Model names of custom assistants: this prefix followed by the `g-…` id
   * (docs/specification.md, "Model access").
   */
  @TextVariable({
    pattern: /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/,
    expects: 'a model-name prefix of letters, digits, . _ or - (at most 64)',
  })
  CUSTOM_ASSISTANT_PREFIX: string = 'gpt-4-gizmo-';

  /** Earlier messages of a conversation sent to the upstream with each new one. */
  @IntegerVariable(0, 500)
  CHAT_HISTORY_MESSAGES: number = 40;

  /** How long one MCP tool call or resource read may take (docs/tools.md). */
  @IntegerVariable(100, 600_000)
  CHAT_TOOL_TIMEOUT_MS: number = 30_000;

  /**
   * The chat model that answers A2A tasks (docs/tools.md, A2A); unset, the A2A endpoint
   * refuses every task.
   */
  @TextVariable({ optional: true, pattern: /^.{1,128}$/, expects: 'a chat model name' })
  CHAT_A2A_MODEL?: string;

  /** How long a task delegated to a remote A2A agent may take, start to end. */
  @IntegerVariable(1000, 3_600_000)
  CHAT_A2A_DELEGATE_TIMEOUT_MS: number = 300_000;

  /**
   * Failed sign-ins on one account from one client address before each further one doubles
   * the wait there (docs/reliability.md, "Sign-in throttling").
   */
  @IntegerVariable(1, 1000)
  LOGIN_MAX_FAILURES_PER_ACCOUNT: number = 5;

  /** Failed sign-ins from one client address, over all accounts, before each doubles the wait. */
  @IntegerVariable(1, 100_000)
  LOGIN_MAX_FAILURES_PER_IP: number = 50;

  /**
   * Failed sign-ins on one account from all addresses within a day before it is refused from
   * everywhere (guessing from many addresses); the admin CLI's `unlock-login --app chat` lifts it.
   */
  @IntegerVariable(10, 10_000_000)
  LOGIN_ACCOUNT_CEILING: number = 1000;

  /** The wait after the first failure past the free ones; each further failure doubles it. */
  @IntegerVariable(1, 3600)
  LOGIN_FIRST_DELAY_SECONDS: number = 1;

  /** The longest wait one address is given (well under the day after which failures are forgotten). */
  @IntegerVariable(1, 6 * 3600)
  LOGIN_MAX_DELAY_SECONDS: number = 3600;

  /**
   * Proxies (the web app) whose X-Forwarded-For names the client, for login throttling, and
   * whose X-Forwarded-Proto/-Host name the origin of the agent card; anyone else's are
   * ignored.
   */
  @ListVariable(CIDR, 'IP addresses or CIDRs')
  TRUSTED_PROXIES: string[] = ['127.0.0.1/32', '::1/128'];
}

export class MeteringEnv extends StoreEnv {
  @PortVariable()
  METERING_OPS_PORT: number = 3004;

  /** Raw usage logs older than this are deleted; daily roll-ups are kept. */
  @IntegerVariable(1, 3650)
  USAGE_RETENTION_DAYS: number = 90;

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
   * every 10 ms at most, so waiting for a few jobs settles usage 20 ms later for a fraction
   * of the work at everyday rates (docs/performance.md, "Metering"). Jobs stay in Redis,
   * locked, until their transaction commits: nothing waits only in memory.
   */
  @IntegerVariable(0, 1_000)
  USAGE_BATCH_WAIT_MS: number = 20;

  /** How often the daily roll-ups of today and yesterday are recomputed. */
  @IntegerVariable(1_000, 86_400_000)
  USAGE_ROLLUP_INTERVAL_MS: number = 300_000;
}

export class WebEnv extends BaseEnv {
  @PortVariable()
  WEB_PORT: number = 8080;

  /** `/metrics` (and probes) only, never exposed publicly (docs/architecture.md, "Operations ports"). */
  @PortVariable()
  WEB_OPS_PORT: number = 8081;

  @UrlVariable(['http', 'https'])
  CHAT_URL: string = 'http://127.0.0.1:3002';

  /**
   * Proxies in front of the web front whose X-Forwarded-For/-Proto/-Host are believed;
   * anyone else's are replaced by what the web front itself saw.
   */
  @ListVariable(CIDR, 'IP addresses or CIDRs')
  TRUSTED_PROXIES: string[] = ['127.0.0.1/32', '::1/128'];

  /** The built single-page app; unset: `public/` beside the app's `main.js`. */
  @TextVariable({ optional: true, expects: 'a directory path' })
  WEB_STATIC_DIR?: string;

  /**
   * Where the chat app may show generated images and sounds from, besides itself: the
   * upstreams' media hosts, as origins (`https://files.example.com`, `http://127.0.0.1:18080`)
   * or `https:` for any HTTPS host (the default: providers keep generated files on hosts of
   * their own). Goes into the page's content security policy.
   */
  @ListVariable(
    /^(https:|https?:\/\/(\*\.)?[A-Za-z0-9.-]+(:\d{1,5})?)$/,
    '`https:` or origins (http(s)://host[:port])',
  )
  WEB_MEDIA_SOURCES: string[] = ['https:'];

  /**
   * No response headers from the chat backend within this time: HTTP 502
   * (docs/specification.md, "Reverse proxy").
   */
  @IntegerVariable(1000, 3_600_000)
  CHAT_HEADERS_TIMEOUT_MS: number = 300_000;

  /** Silence between two chunks of a proxied body after which it is cut. */
  @IntegerVariable(1000, 3_600_000)
  CHAT_IDLE_TIMEOUT_MS: number = 300_000;
}

export class MockUpstreamEnv extends BaseEnv {
  @PortVariable()
  MOCK_UPSTREAM_PORT: number = 18080;

  /**
   * The account pool: `key[:rpm[:tpm[:banned]]]`, comma-separated; `0` is no limit.
   * Example: `sk-mock-1:60:100000,sk-mock-2:60:100000,sk-mock-banned:0:0:banned`.
   */
  @ListVariable(/^[A-Za-z0-9_.-]+(:\d+(:\d+(:banned)?)?)?$/, 'key[:rpm[:tpm[:banned]]] accounts')
  MOCK_ACCOUNTS: string[] = ['sk-mock-demo'];

  @IntegerVariable(0, 600_000)
  MOCK_LATENCY_MS: number = 0;

  /** Delay between two streamed chunks. */
  @IntegerVariable(0, 60_000)
  MOCK_CHUNK_DELAY_MS: number = 0;

  /** Percentage of requests answered with a 500. */
  @IntegerVariable(0, 100)
  MOCK_ERROR_RATE: number = 0;
}

/** The leaf classes, one per app. */
export const APP_ENVIRONMENTS = {
  edge: EdgeEnv,
  router: RouterEnv,
  admin: AdminEnv,
  chat: ChatEnv,
  metering: MeteringEnv,
  web: WebEnv,
  'mock-upstream': MockUpstreamEnv,
} as const;

export type AppName = keyof typeof APP_ENVIRONMENTS;
